"""Version awareness: pages about past releases, told apart from the current reference; pure.

A small model took an old "What's New" page for current behaviour (issue 23): a release
note answers "what changed in 2.5", not "what does it do now". So, for a question that does
not ask about versions or changes, release-note pages (changelogs, release notes, "What's
New", SQLite's release log, Git's RelNotes) rank below the other results, and whenever one
is evidence its title says which version it describes, so the answer can say so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from orchestrator.core.ask.domain import Evidence, SearchHit

# A URL or title naming release notes: changelog, changes, release notes/log, relnotes,
# what's new, news.
_NOTES_RE = re.compile(
    r"change[-_ ]?log|\bchanges\b|release[-_ ]?(?:notes?|log|history)|relnotes|"
    r"what'?s[-_ ]?new|\bnews\b|\breleases?\b",
    re.IGNORECASE,
)
# A version: 2.5, 3.40.1, or SQLite's 3_40_1 in file names.
_VERSION_RE = re.compile(r"(?<![\d.])(\d+(?:[._]\d+){1,3})(?![\d])")
# A question about versions or changes: then release notes are the right pages.
_ASKS_RE = re.compile(
    r"\bversions?\b|\breleases?d?\b|\bchanged?\b|\bchanges\b|\bnew in\b|\bintroduced\b|"
    r"\badded\b|\bsince\b|\bdeprecated\b|\bremoved\b|\bwhat'?s new\b|\bhistory\b|"
    r"\bupgrad\w*|\bfirst\b|\d+\.\d+",
    re.IGNORECASE,
)

T = TypeVar("T", SearchHit, Evidence)
# What a release note's title gets: the model sees it in the source's fence, the user on its card.
_LABEL = "release notes: past behaviour"


def is_release_notes(url: str, title: str) -> bool:
    """Whether the page is about past releases (by its URL path or its title)."""
    path = url.split("://", 1)[-1].partition("/")[2]
    return bool(_NOTES_RE.search(path) or _NOTES_RE.search(title))


def version_of(url: str, title: str) -> str:
    """The version a release-note page describes ("" when it names none)."""
    for text in (title, url.rsplit("/", 1)[-1]):
        m = _VERSION_RE.search(text)
        if m:
            return m.group(1).replace("_", ".")
    return ""


def asks_about_versions(question: str) -> bool:
    """Whether ``question`` asks about versions or changes (release notes then rank as
    they are)."""
    return bool(_ASKS_RE.search(question))


def current_first(items: Sequence[T], question: str) -> list[T]:
    """``items`` with release-note pages after the others (each group in its order), unless
    ``question`` asks about versions or changes."""
    if asks_about_versions(question):
        return list(items)
    notes = [is_release_notes(i.url, i.title) for i in items]
    return [i for i, n in zip(items, notes, strict=True) if not n] + [
        i for i, n in zip(items, notes, strict=True) if n
    ]


def labelled(item: Evidence) -> Evidence:
    """``item`` with a title that says it is a release note, and of which version."""
    if not is_release_notes(item.url, item.title) or _LABEL in item.title:
        return item
    version = version_of(item.url, item.title)
    what = f"{_LABEL}, version {version}" if version else _LABEL
    return replace(item, title=f"{item.title} ({what})")
