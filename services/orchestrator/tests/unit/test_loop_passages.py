"""The loop's evidence: passages ranked against every query, within the budget, shown per source."""

from __future__ import annotations

from orchestrator.core.ask.evidence import estimate_tokens
from orchestrator.core.schemas import Judgement, Plan

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import first, harness

URLS = [f"http://site{i}.test/page" for i in range(6)]
PAGES = {u: (f"Title {i}", f"Quarry bridge fact {i}. " * 3) for i, u in enumerate(URLS)}
INSUFFICIENT = Judgement(sufficiency="insufficient")
SUFFICIENT = Judgement(sufficiency="sufficient")


async def test_passages_are_ranked_against_question_rewrite_and_gap_queries() -> None:
    brain = ScriptedBrain(
        plans=[Plan(optimized_query="quarry bridge opening")],
        judgements=[
            INSUFFICIENT,
            Judgement(sufficiency="partial", gap_queries=["bridge architect"]),
            INSUFFICIENT,
            SUFFICIENT,
        ],
    )
    searcher = ScriptedSearcher(script=[hits(*URLS[:3], words="q"), hits(*URLS[3:], words="q")])
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        events = await h.run("when did the bridge open")
    calls = h.ranker.passage_calls
    assert calls[0][0] == ["when did the bridge open", "quarry bridge opening"]
    assert calls[-1][0] == [
        "when did the bridge open",
        "quarry bridge opening",
        "bridge architect",
    ]
    snippet_cost = sum(estimate_tokens(f"snippet {i} q") for i in (0, 1, 2))
    assert calls[0][1] == h.settings.evidence_budget_tokens() - snippet_cost
    assert "RankChunks" not in h.ranker.calls
    sources = first(events, "sources").data["sources"]
    assert {s["url"] for s in sources} == set(URLS)
    for s in sources:
        text = PAGES[s["url"]][1]
        assert s["passages"][0] == text[:1000].strip()  # the best passage first
    assert h.outcome.sources[0]["passages"] == sources[0]["passages"]


async def test_chunk_per_url_is_the_old_path() -> None:
    brain = ScriptedBrain(judgements=[INSUFFICIENT, SUFFICIENT])
    searcher = ScriptedSearcher(default=hits(*URLS[:3], words="quarry"))
    async with harness(brain=brain, pages=PAGES, searcher=searcher, evidence="chunk_per_url") as h:
        events = await h.run("quarry bridge")
    assert "RankChunks" in h.ranker.calls
    assert "RankPassages" not in h.ranker.calls
    sources = first(events, "sources").data["sources"]
    assert all(s["passages"] == [PAGES[s["url"]][1].strip()] for s in sources)
    assert {e.kind for e in brain.judged[-1]} == {"chunk"}


async def test_each_page_is_prepared_as_it_is_read_unless_switched_off() -> None:
    searcher = ScriptedSearcher(default=hits(*URLS[:3], words="quarry"))
    brain = ScriptedBrain(judgements=[INSUFFICIENT, SUFFICIENT])
    async with harness(brain=brain, pages=PAGES, searcher=searcher) as h:
        await h.run("quarry bridge")
    assert sorted(h.ranker.prepared) == URLS[:3]
    assert "RankPassages" in h.ranker.calls
    brain = ScriptedBrain(judgements=[INSUFFICIENT, SUFFICIENT])
    async with harness(brain=brain, pages=PAGES, searcher=searcher, prepare_passages=False) as off:
        events = await off.run("quarry bridge")
    assert off.ranker.prepared == []
    assert {s["url"] for s in first(events, "sources").data["sources"]} == set(URLS[:3])


async def test_each_part_of_a_question_asking_two_things_keeps_its_page_in_speed() -> None:
    # Ranked for the whole question, the three daemon pages fill speed's four URLs with the
    # first part's pages; each part searched and ranked on its own keeps the stash page.
    daemon = [f"http://daemon{i}.test/" for i in range(4)]
    stash = "http://stash.test/"
    found = hits(*daemon, words="port git daemon listen") + hits(stash, words="newest stash")
    pages = dict.fromkeys(daemon, ("Page", "git daemon port 9418. " * 3))
    pages[stash] = ("Stash", "The newest stash is stash@{0}.")
    searcher = ScriptedSearcher(default=found)
    async with harness(pages=pages, searcher=searcher) as h:
        events = await h.run(
            "On which port does git daemon listen, and how is the newest stash named?", mode="speed"
        )
    assert searcher.queries[1:] == [
        "On which port does git daemon listen?",
        "How is the newest stash named?",
    ]
    assert stash in h.reader.calls
    # Each part ranks the passages for half the budget: the stash answer is shown too.
    (one, budget_one), (two, budget_two) = h.ranker.passage_calls
    assert [one[0], two[0]] == searcher.queries[1:]
    assert budget_one == budget_two
    sources = first(events, "sources").data["sources"]
    assert stash in [s["url"] for s in sources]
