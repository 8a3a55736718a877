"""Deterministic query expansion for runs without a planner call (``speed``); pure.

Where the planner runs, its rewrite is the second query the passages are ranked against.
Where it does not (``speed`` asks it only for pronouns), the question alone ranked them, so a
page's passages were matched against one phrasing. This adds one keyword query: the
question's names and terms (compounds such as ``--force`` or ``core.autocrlf`` kept whole),
without question words, plus the words reference pages use for the kind of value asked
("How many …" -> "maximum limit", "… by default" -> "default defaults", "Which version …"
-> "version added"). It ranks the passages beside the question (BM25 and dense, fused by
RRF); it is not sent to the search engine.

A question that asks two things ("Which port does git daemon use, and how is the newest stash
named?") is also split into its parts (:func:`sub_questions`): each part is searched and ranks
the passages, so the page holding the second answer is not crowded out by the first's.
"""

from __future__ import annotations

import re

from orchestrator.core.ask.intent import content_words

# A flag, a dotted/underscored/hyphenated name, or a word.
_TOKEN_RE = re.compile(r"--?[A-Za-z][\w-]*|\w[\w.\-]*\w|\w")
_CUES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), words)
    for pattern, words in (
        (r"\bdefaults?\b", "default defaults"),
        (
            r"\bhow many\b|\bmaximum\b|\blargest\b|\bmost\b|\blimit\b|\bupper bound\b",
            "maximum limit",
        ),
        (r"\bminimum\b|\bsmallest\b|\bat least\b|\blowest\b", "minimum"),
        (r"\bwhich version\b|\bwhat version\b|\bintroduced\b|\badded\b", "version added"),
        (r"\bhow long\b|\btimeout\b|\bexpir", "seconds timeout"),
        (r"\bhow (?:big|large)\b|\bsize\b", "size bytes"),
    )
)


def keyword_query(question: str) -> str:
    """The question's terms plus cue words for the kind of value it asks; "" when that
    adds nothing to the question."""
    content = set(content_words(question))
    keep = [
        t
        for t in _TOKEN_RE.findall(question)
        if not t.isalnum() or t.lower() in content or any(c.isdigit() for c in t)
    ]
    cues = [words for pattern, words in _CUES if pattern.search(question)]
    query = " ".join(dict.fromkeys([*keep, *" ".join(cues).split()]))
    return query if query and query.lower() != question.lower() else ""


# ", and" before a question word (possibly after a preposition: "and at what …", "and for how
# many …"): where a question asking two things joins them.
_AND_ASKS = re.compile(
    r",\s+and\s+(?=(?:\w+\s+){0,2}?(?:what|which|how|where|when|who|whose|why)\b)",
    re.IGNORECASE,
)
# A part needs this many content words of its own to be searched alone.
MIN_PART_WORDS = 2


def sub_questions(question: str) -> list[str]:
    """The parts of a question that asks two (or more) things, each as a question of its own;
    [] when it asks one thing or a part is too thin to search alone."""
    parts = [p.strip(" ,;?") for p in _AND_ASKS.split(question.strip())]
    parts = [p for p in parts if p]
    if len(parts) < 2 or any(len(content_words(p)) < MIN_PART_WORDS for p in parts):
        return []
    return [p[:1].upper() + p[1:] + "?" for p in parts]
