"""Run modes: how much work (LLM calls, rounds, pages, evidence) one question gets.

A mode is a small pure profile the loop reads; nothing here does I/O. Why three:

* ``speed`` is for the embedded CPU model: prompt processing dominates on two cores (~40 s for
  1.5k tokens with Qwen2.5-Coder-1.5B), so every LLM call and every evidence token counts. No
  planner call unless the question needs a rewrite, no judges, one round, a few short sources:
  one LLM call (the answer) in the common case.
* ``balanced`` is the full loop as it was before modes: planner, snippet and chunk judges, up to
  ``ORCHESTRATOR_MAX_ROUNDS`` rounds.
* ``quality`` gives a faster server more rounds, more pages and more evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["speed", "balanced", "quality"]
ModeSetting = Literal["auto", "speed", "balanced", "quality"]
MODES: tuple[Mode, ...] = ("speed", "balanced", "quality")


@dataclass(frozen=True)
class ModeProfile:
    """What one mode allows; ``None`` means "the setting's value"."""

    name: Mode
    # Call the planner for every question (False: only when the prefilter says it must).
    plan_always: bool
    snippet_judge: bool
    chunk_judge: bool
    max_rounds: int | None
    # Result URLs kept after ranking (and read); None: ORCHESTRATOR_TOP_URLS.
    top_urls: int | None
    # Chunks given to the judge and the answer with ORCHESTRATOR_EVIDENCE=chunk_per_url;
    # None: ORCHESTRATOR_CHUNK_TOP_K.
    evidence_sources: int | None
    # Characters of each chunk (ORCHESTRATOR_EVIDENCE=chunk_per_url) or snippet shown to the
    # LLM, a cap on top of the token budget; None: only the budget. Ranked passages are never
    # cut per source: the ranker fitted them to the budget by rank, and cutting a source after
    # that dropped its best passage when the snippet and earlier passages came first (#23).
    source_chars: int | None
    # Tokens of evidence (ORCHESTRATOR_EVIDENCE=passages), capping the setting's; None: the
    # setting's budget.
    evidence_tokens: int | None = None
    # Search snippets kept beside the passages; None: ORCHESTRATOR_EVIDENCE_SNIPPETS.
    evidence_snippets: int | None = None
    # The passage budget of a question asking two things (core/ask/expand.py sub_questions),
    # as a multiple of a one-part question's: each part ranks passages for its share.
    parts_budget: float = 1.0
    # Result URLs kept (and read) for a question asking two things; None: ``top_urls``.
    parts_top_urls: int | None = None


PROFILES: dict[Mode, ModeProfile] = {
    "speed": ModeProfile(
        "speed",
        plan_always=False,
        snippet_judge=False,
        chunk_judge=False,
        max_rounds=1,
        # Pages read: their passages compete for the same evidence budget, so more pages cost
        # reads (in parallel), not prompt tokens. 4 -> 6: tuning sets' speed passage recall
        # 82.5 -> 83.3 % (a two-page question; none lost); 8 gained two-page questions and lost
        # a deep one (84.1 %, docs/evaluation.md).
        top_urls=6,
        evidence_sources=3,
        source_chars=900,
        # Prompt processing is ~25 ms a token for the embedded 1.5B model on two cores.
        evidence_tokens=900,
        evidence_snippets=1,
        # Half of 900 tokens a part left the second answer out for 7 of the tuning sets' 30
        # two-page questions whose pages were read; 1.5x (675 a part, ~+11 s of prompt on two
        # cores, for two-part questions only): passage recall 53.3 -> 63.3 % (+4, -1); 2x: 66.7.
        parts_budget=1.5,
        # Each part ranks the results for itself and the lists are interleaved, so of 6 pages
        # a part got ~2 and its best page was often the seventh; 8 for two-part questions only
        # (reads run in parallel; the evidence budget is the same): tuning two-page passage
        # recall 63.3 -> 73.3 % (+3, -0), held-out 66.7 unchanged; one-part questions keep 6
        # (8 for every question lost a deep one).
        parts_top_urls=8,
    ),
    "balanced": ModeProfile(
        "balanced",
        plan_always=True,
        snippet_judge=True,
        chunk_judge=True,
        max_rounds=None,
        top_urls=None,
        evidence_sources=None,
        evidence_tokens=None,
        evidence_snippets=None,
        source_chars=None,
    ),
    "quality": ModeProfile(
        "quality",
        plan_always=True,
        snippet_judge=True,
        chunk_judge=True,
        max_rounds=5,
        top_urls=15,
        evidence_sources=12,
        evidence_tokens=None,
        evidence_snippets=None,
        source_chars=None,
    ),
}


def resolve_mode(requested: Mode | None, setting: ModeSetting, *, embedded_llm: bool) -> Mode:
    """The request's mode, else the setting's, else (``auto``) one that fits the LLM.

    ``auto``: the embedded CPU model of `make run` gets ``speed``; a configured server
    (Ollama, an OpenAI-compatible endpoint, usually on better hardware) gets ``balanced``.
    """
    if requested is not None:
        return requested
    if setting != "auto":
        return setting
    return "speed" if embedded_llm else "balanced"
