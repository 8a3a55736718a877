"""Deterministic query expansion for runs without a planner call (``speed``); pure.

Where the planner runs, its rewrite is the second query the passages are ranked against.
Where it does not (``speed`` asks it only for pronouns), the question alone ranked them, so a
page's passages were matched against one phrasing. This adds one keyword query: the
question's names and terms (compounds such as ``--force`` or ``core.autocrlf`` kept whole),
without question words, plus the words reference pages use for the kind of value asked
("How many …" -> "maximum limit", "… by default" -> "default defaults", "Which version …"
-> "version added"). It ranks the passages beside the question (BM25 and dense, fused by
RRF); it is not sent to the search engine.
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
