"""The answer as synthesis leaves it (core/ask/synthesise.py): never cut mid-sentence, and an
answer nothing supports leads with the engine's plain "the sources don't say"."""

from __future__ import annotations

from orchestrator.core.ending import SOURCES_DONT_SAY
from orchestrator.core.schemas import Judgement

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import first, harness

URLS = [f"http://site{i}.test/page" for i in range(2)]
PAGES = {
    u: ("Quarry", f"quarry is an answer engine that reads pages {i}.") for i, u in enumerate(URLS)
}
SUFFICIENT = Judgement(sufficiency="sufficient")


def _searcher() -> ScriptedSearcher:
    # The snippets suffice (SUFFICIENT): they are the sources the answer is checked against.
    return ScriptedSearcher(
        default=hits(*URLS, words="quarry is an answer engine that reads pages")
    )


async def test_an_answer_the_token_budget_cut_ends_at_its_last_full_sentence() -> None:
    whole = "Quarry is an answer engine that reads pages [1]."
    cut = " It reads every page the search engine returns and then"
    brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=whole + cut)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("what is quarry", prefetch=False)
    done = first(events, "answer.completed").data
    assert done["text"].strip() == whole
    assert done["sentences"][-1]["text"].strip() == whole


async def test_a_few_words_after_a_finished_sentence_on_its_line_are_dropped() -> None:
    # The embedded model stops so ("… useless to the recipient. If on"): too short to look cut
    # by length, but no list item or label starts mid-line.
    whole = "Quarry is an answer engine that reads pages [1]."
    brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=whole + " If on")
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("what is quarry", prefetch=False)
    assert first(events, "answer.completed").data["text"].strip() == whole


async def test_a_last_line_of_its_own_that_is_no_list_item_and_ends_no_sentence_is_dropped() -> (
    None
):
    # A page title echoed as a footer, or a copied passage's first word ("For").
    whole = "Quarry is an answer engine that reads pages [1]."
    for tail in ("\n\nQuarry Manual Version 2.4 [1]", "\nFor"):
        brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=whole + tail)
        async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
            events = await h.run("what is quarry", prefetch=False)
        assert first(events, "answer.completed").data["text"].strip() == whole, tail


async def test_a_short_last_line_is_kept() -> None:
    text = "Quarry is an answer engine that reads pages [1]. See also:\n- quarry index"
    brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=text)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("what is quarry", prefetch=False)
    assert first(events, "answer.completed").data["text"].endswith("- quarry index")
    # What a label introduces stays too.
    text = "Quarry is an answer engine that reads pages [1]. Its index command:\nquarry index docs"
    brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=text)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("what is quarry", prefetch=False)
    assert first(events, "answer.completed").data["text"].endswith("quarry index docs")


async def test_an_answer_nothing_supports_leads_with_the_sources_dont_say() -> None:
    draft = "Volcanic eruptions under the seabed double every tide in December [1]."
    brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=draft)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("what is quarry", prefetch=False)
    done = first(events, "answer.completed").data
    assert done["text"].startswith(SOURCES_DONT_SAY)
    assert "which no source supports" in done["text"]
    assert done["sentences"][0]["support"] is None  # the engine's note, not a claim
    assert done["sentences"][-1]["support"] == "unsupported"
    assert "[1]" not in done["text"].split("which no source supports")[1]


async def test_citations_alone_in_a_last_paragraph_cite_nothing() -> None:
    # The embedded model's habit: the answer, then "[1]" on a line of its own. Glued to the
    # sentence before, it made an uncited (and unsupported) claim look cited.
    text = "Quarry is an answer engine that reads pages [1]. Its default port is 9999.\n\n[1]"
    brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=text)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("what is quarry", prefetch=False)
    done = first(events, "answer.completed").data
    assert done["text"].endswith("Its default port is 9999.")
    assert done["sentences"][-1]["support"] == "unsupported"
    assert done["sentences"][-1]["citations"] == []


async def test_the_support_model_marks_the_cited_sentences_in_one_call_after_the_stream() -> None:
    text = "Quarry is an answer engine that reads pages [1]. Quarry reads pages quickly [2]."
    brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=text)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        h.ranker.verdicts = [(0.9, "supported"), (0.1, "unsupported")]
        events = await h.run("what is quarry", prefetch=False)
    assert h.ranker.calls.count("CheckSupport") == 1
    (claims,) = h.ranker.support_claims
    assert [sentence for sentence, _ in claims] == [
        "Quarry is an answer engine that reads pages.",
        "Quarry reads pages quickly.",
    ]
    done = first(events, "answer.completed").data
    first_mark, second = done["sentences"]
    assert (first_mark["support"], first_mark["citations"]) == ("supported", [1])
    # The model found the second unsupported: it is shown uncited.
    assert (second["support"], second["citations"]) == ("unsupported", [])
    assert "[2]" not in done["text"]


async def test_without_the_support_model_the_lexical_marks_stay() -> None:
    text = "Quarry is an answer engine that reads pages [1]."
    brain = ScriptedBrain(judgements=[SUFFICIENT], answer_text=text)
    async with harness(brain=brain, pages=PAGES, searcher=_searcher()) as h:
        events = await h.run("what is quarry", prefetch=False)  # verdicts None: UNAVAILABLE
        assert h.ranker.calls.count("CheckSupport") == 1
    (mark,) = first(events, "answer.completed").data["sentences"]
    assert (mark["support"], mark["citations"]) == ("supported", [1])
    async with harness(
        brain=brain, pages=PAGES, searcher=_searcher(), support_check_timeout_s=0
    ) as h:
        await h.run("what is quarry", prefetch=False)
        assert "CheckSupport" not in h.ranker.calls  # switched off
