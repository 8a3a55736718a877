"""The deterministic prefilter and how it joins the planner model's verdict (pure)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from orchestrator.core.ask.expand import keyword_query, sub_questions
from orchestrator.core.ask.intent import (
    carry_context,
    prefilter,
    referring_words,
    resolve_query,
    subject_of,
)
from orchestrator.core.ask.plan import combine
from orchestrator.core.schemas import Plan
from orchestrator.core.sessions import Turn as SessionTurn

from services.orchestrator.tests.unit.doubles import ScriptedBrain, ScriptedSearcher, hits
from services.orchestrator.tests.unit.harness import first, harness


@dataclass(frozen=True)
class Turn:
    question: str
    answer: str = ""


EIFFEL = [Turn("How old is the Eiffel Tower?", "It opened in 1889 [1].")]
CLARIFY = Plan(action="clarify", clarifying_question="Which tower do you mean?")
PROCEED = Plan(action="proceed", optimized_query="how tall is it")


@pytest.mark.parametrize(
    "question",
    [
        "How do I make Quarry search my own documents?",
        "Which environment variable sets the folder of local documents that Quarry indexes?",
        "What does Quarry do?",
        "Is there a way to run Quarry without Docker?",
        "What is the capital of France?",
        # The pronoun's antecedent is named before it (the embedded model asked this back).
        "How frequently does the ffmpeg command refresh the progress line it prints?",
    ],
)
def test_clear_first_questions_are_searched_even_when_the_model_asks_back(question: str) -> None:
    pre = prefilter(question, has_history=False)
    assert pre.verdict == "clear", pre
    plan = combine(pre, CLARIFY, question, [])
    assert plan.action == "proceed"
    assert plan.optimized_query == question


@pytest.mark.parametrize(
    "question", ["How tall is it?", "Tell me more about that.", "And the other one?", "Why?"]
)
def test_a_bare_pronoun_with_no_history_is_asked_back_even_when_the_model_proceeds(
    question: str,
) -> None:
    pre = prefilter(question, has_history=False)
    assert pre.verdict == "unresolved", pre
    plan = combine(pre, PROCEED, question, [])
    assert plan.action == "clarify"
    assert plan.clarifying_question
    # The model's own question is used when it wrote one.
    assert combine(pre, CLARIFY, question, []).clarifying_question == "Which tower do you mean?"


def test_candidates_follow_the_model() -> None:
    pre = prefilter("Is it safe to eat raw cookie dough?", has_history=False)
    assert pre.verdict == "candidate"
    assert prefilter("Is there a way to run it?", has_history=False).verdict == "candidate"
    assert combine(pre, CLARIFY, "q", []).action == "clarify"
    assert combine(pre, PROCEED, "q", []).action == "proceed"


@pytest.mark.parametrize("question", ["Photosynthesis", "Rust ownership", "Explain photosynthesis"])
def test_a_short_topic_query_is_searched_even_when_the_model_asks_back(question: str) -> None:
    pre = prefilter(question, has_history=False)
    assert pre.verdict == "clear", pre
    assert combine(pre, CLARIFY, question, []).action == "proceed"


def test_relative_that_and_existential_there_do_not_refer() -> None:
    assert referring_words("the folder that Quarry indexes") == ()
    assert referring_words("Is there a way to run it?") == ("it",)
    assert referring_words("What does that mean?") == ("that",)
    assert referring_words("How do I get there?") == ("there",)


def test_follow_up_pronouns_resolve_against_the_history() -> None:
    pre = prefilter("How tall is it?", has_history=True)
    assert pre.verdict == "clear"
    assert pre.needs_rewrite
    # The model asked back: overruled, and its bare rewrite gets the subject appended.
    plan = combine(pre, CLARIFY, "How tall is it?", EIFFEL)
    assert plan.action == "proceed"
    assert plan.optimized_query == "How tall is it? Eiffel Tower"
    # A rewrite that names the referent is kept as it is.
    named = Plan(optimized_query="Eiffel Tower height")
    assert combine(pre, named, "How tall is it?", EIFFEL).optimized_query == "Eiffel Tower height"
    assert combine(pre, PROCEED, "q", EIFFEL).optimized_query == "how tall is it Eiffel Tower"


def test_subject_of_prefers_names_then_content_words() -> None:
    assert subject_of("Who designed the Zephyrine Lighthouse?") == "Zephyrine Lighthouse"
    assert subject_of("what is karvik saltbread?") == "karvik saltbread"
    assert resolve_query("no pronoun here", EIFFEL) == "no pronoun here"
    assert resolve_query("how tall is it", []) == "how tall is it"


OSLO = [Turn("How cold is Oslo in summer?", "About 16 °C in July [1].")]


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        ("And in winter?", "And in winter? cold Oslo"),  # "summer" is the slot it refills
        ("In winter?", "In winter? cold Oslo"),
        ("What about Bergen?", "What about Bergen? cold summer"),  # a new name replaces Oslo
        ("Why?", "Why? cold Oslo summer"),
        # Not elliptical: whole questions and topic queries stand alone.
        ("How cold is Oslo in winter?", "How cold is Oslo in winter?"),
        ("What is the capital of France?", "What is the capital of France?"),
        ("Rust ownership", "Rust ownership"),
    ],
)
def test_an_elliptical_follow_up_carries_the_last_questions_key_terms(
    question: str, searched: str
) -> None:
    plan = combine(prefilter(question, has_history=True), None, question, OSLO)
    assert plan.optimized_query == searched
    # A planner's rewrite that already carries the earlier question's terms is kept.
    rewrite = Plan(optimized_query="cold weather in the season asked")
    kept = combine(prefilter(question, has_history=True), rewrite, question, OSLO)
    assert kept.optimized_query == "cold weather in the season asked"
    # Without history nothing is carried.
    assert carry_context(question, question, []) == question


async def test_speed_searches_a_follow_up_with_its_conversation_without_a_planner_call() -> None:
    brain = ScriptedBrain()
    searcher = ScriptedSearcher(default=hits("http://weather.test/oslo", words="oslo winter"))
    pages = {"http://weather.test/oslo": ("Oslo", "Oslo is cold in winter: -4 °C in January.")}
    async with harness(brain=brain, searcher=searcher, pages=pages) as h:
        turn = SessionTurn(OSLO[0].question, OSLO[0].answer, (), "answered", 0.0)
        events = await h.run("And in winter?", history=[turn], mode="speed")
    assert searcher.queries == ["And in winter? cold Oslo"]
    assert first(events, "plan").data["planner"] == "skipped"


def test_keyword_query_keeps_names_and_flags_and_adds_cue_words() -> None:
    question = "How many terms can a compound SELECT statement have by default?"
    assert (
        keyword_query(question) == "terms compound SELECT statement default defaults maximum limit"
    )
    assert keyword_query("What does git push -u do?") == "git push -u"
    assert keyword_query("core.autocrlf") == ""  # nothing to add


async def test_speed_ranks_passages_against_a_keyword_query_when_no_planner_runs() -> None:
    searcher = ScriptedSearcher(default=hits("http://sqlite.test/limits", words="compound"))
    pages = {"http://sqlite.test/limits": ("Limits", "A compound SELECT defaults to 500 terms.")}
    question = "How many terms can a compound SELECT statement have by default?"
    async with harness(searcher=searcher, pages=pages) as h:
        events = await h.run(question, mode="speed")
    assert first(events, "plan").data["planner"] == "skipped"
    assert searcher.queries == [question]  # the search engine gets the question as asked
    assert h.ranker.passage_calls[0][0] == [question, keyword_query(question)]


async def test_balanced_ranks_passages_against_the_rewrite_and_a_keyword_query() -> None:
    # The planner ran (balanced): its rewrite ranks the passages, and so does the keyword
    # query; before, a rewrite that kept the question's phrasing was the only other query.
    searcher = ScriptedSearcher(default=hits("http://sqlite.test/limits", words="compound"))
    pages = {"http://sqlite.test/limits": ("Limits", "A compound SELECT defaults to 500 terms.")}
    question = "How many terms can a compound SELECT statement have by default?"
    rewrite = "compound SELECT terms limit"
    brain = ScriptedBrain(plans=[Plan(optimized_query=rewrite)])
    async with harness(brain=brain, searcher=searcher, pages=pages) as h:
        await h.run(question, mode="balanced")
    assert h.ranker.passage_calls[0][0] == [question, rewrite, keyword_query(rewrite)]


def test_a_question_asking_two_things_is_split_into_its_parts() -> None:
    assert sub_questions(
        "Which exit code makes git bisect run skip a commit, and which option bypasses the hook?"
    ) == ["Which exit code makes git bisect run skip a commit?", "Which option bypasses the hook?"]
    # A preposition before the question word still joins two questions.
    assert sub_questions(
        "What is git's default gc.auto threshold, and at how many pages does SQLite checkpoint?"
    ) == ["What is git's default gc.auto threshold?", "At how many pages does SQLite checkpoint?"]
    # One question: "and" inside it, no comma, or a part too thin to search alone.
    assert sub_questions("Which options does git push take and what do they do?") == []
    assert sub_questions("How do rebase and merge differ?") == []
    assert sub_questions("What is WAL mode, and why?") == []
