"""Which entry of a reference passage a sentence's value belongs to.

A manual's option list, directive table or config reference is a run of *entries*: a line (or
a bold flag inside a man page's paragraph) that starts with a name -- ``-min_delay``,
``gc.autoPackLimit``, ``HIST_SAVE_NO_DUPS``, ``@{-<n>}`` -- followed by what it does and its
default. A small model reading such a passage often copies the right kind of fact from the
wrong entry: "the default ``min_delay`` is 10" where the passage says "-min_delay … (default
2) -default_delay … (default 10)". The word and value checks (core/support.py, libs/rerank)
pass it: every word and the value are in the passage. This module asks which entry the value
sits in:

* **value from a neighbour**: the sentence names entry X (as the question does) and states
  an amount (a number, a version) that X's entry lacks and another entry holds, while X's
  entry states an amount of its own ("(default 2)");
* **the question's entry passed over**: the question names entry Q; the sentence's entry --
  the one it names, else the one holding its amount -- is another, and none of its amounts is
  in Q's ("gc.autoPackLimit is 50" for "what is gc.auto's default?");
* **the entry the question describes passed over**: the question names nothing; the sentence
  answers it with entry X, or with an amount only X holds, while the question's words fit
  another entry far better ("the shorthand for a branch's upstream is ``@{-<n>}``", the entry
  just before ``@{upstream}``).

Each rule was kept because, on the stored tuning drafts (bench/eval/replay.py), it turned
confidently wrong answers into abstentions and hedged no right one (docs/evaluation.md,
eighth session).

Such a sentence is a claim about an entry its citation does not back. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from orchestrator.core.citations import claim_text, content_words
from orchestrator.core.support import CAMEL, CAPS, values

# An entry starts a line: optional list marker or the ellipsis a snippet starts with, optional
# emphasis, then its name, then the line's end, a default in brackets, a comma or colon, a man
# page's column gap, or a capital starting the description ("…gc.auto When there are …"); not
# prose running on ("FTS5 assumes the …", "copy/rename detection"). A man page's bold flag
# ("**-s**  Structure check") starts one anywhere; so does a directive page's heading
# ("## Options Directive").
_LINE_START = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+|…)?[*`_]*(?P<name>[^\s*`]+?)[*`_]*"
    r"(?=[ \t]*$|[ \t]*[(,:=]|[ \t]{2}|[ \t][A-Z][a-z])",
    re.MULTILINE,
)
# A flag at a line's start heads an entry whatever follows ("- -min_delay integer").
_FLAG_START = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+|…)?[*`_]*(?P<name>--?[A-Za-z][\w-]*)", re.MULTILINE
)
_BOLD_FLAG = re.compile(r"\*\*(?P<name>--?[A-Za-z][\w-]*)\*\*")
# A postconf entry run into one line by a snippet: "… channel. max_idle (100s) The maximum …".
_INLINE = re.compile(r"(?:(?<=[.:]\s)|(?<=…))\**(?P<name>[A-Za-z]\w*[_.][\w.]*\w)\** \(")
_HEADING = re.compile(r"^#{1,6}[ \t]+(?P<name>\w+)[ \t]+Directive\b", re.MULTILINE)
# The question's words an entry must hold to be the one it asks about, and by how much more
# than the entry the sentence names (see _described).
MIN_QUESTION_WORDS = 3
DESCRIBED_AT = 0.5
DESCRIBED_BY = 0.3
_AMOUNT = re.compile(r"\d[\d.]*")
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
# Where an entry stops short of the next one: a gap the snippet cut ("[…]"), another source.
_CUT = re.compile(r"\n\s*\[…\]|\nTitle: ")
# A name: a flag, something with "_", ".", "/" or "@{" inside, an ALL-CAPS or camelCase word.
_NAME = re.compile(rf"--?[A-Za-z][\w-]*|.*@\{{.*|\w+(?:[_./]\w+)+|{CAPS}|{CAMEL}")
_PLACEHOLDER = re.compile(r"<[^>]*>|[\[\]*`\"“”'()]")
# A first line this short is the entry's head ("- *@{-<n>}*, e.g. *@{-1}*"): each name on it
# is the entry's; on a longer line only the first is (the rest is the description).
_HEAD_CHARS = 80


@dataclass(frozen=True)
class Entry:
    """One entry: the names it defines (see key()) and its text, head included."""

    names: frozenset[str]
    text: str


def _trim(token: str) -> str:
    return token.lstrip("(").rstrip(".,:;?!)")


def key(token: str) -> str:
    """A name as compared: lower case, without emphasis, quotes, brackets or ``<placeholders>``
    ("[<branchname>]@{upstream}" is "@{upstream}"), surrounding punctuation and a long option's
    dashes dropped."""
    bare = _PLACEHOLDER.sub("", _trim(token)).lower()
    # "-min_delay" is the option a sentence calls `min_delay`; "-s" keeps its dash.
    return bare.lstrip("-") if len(bare.lstrip("-")) >= 3 else bare


def is_name(token: str) -> bool:
    """Whether ``token`` looks like the name of an option, variable or directive."""
    bare = key(token)
    return bare not in ("", "e.g", "i.e") and _NAME.fullmatch(_trim(token)) is not None


def names_in(text: str) -> set[str]:
    """The keys of every name-like token of ``text``."""
    return {key(t) for t in re.findall(r"[^\s`*\"“”]+", text) if is_name(t)}


def entries(passage: str) -> list[Entry]:
    """The entries of ``passage`` in order; [] when it has fewer than two (prose, not a list)."""
    # A fenced code block's lines ("git gc\n    --auto") are not entries.
    fenced = [m.span() for m in _FENCE.finditer(passage)]
    starts: list[tuple[int, str]] = []
    for pattern in (_LINE_START, _FLAG_START, _BOLD_FLAG, _INLINE, _HEADING):
        starts += [
            (m.start(), m["name"])
            for m in pattern.finditer(passage)
            if is_name(m["name"]) and not any(a <= m.start() < b for a, b in fenced)
        ]
    starts = sorted(set(starts))
    # Two patterns finding one head ("…ipc_timeout (3600s)"): the first one.
    starts = [
        (at, name)
        for i, (at, name) in enumerate(starts)
        if i == 0 or re.search(r"\w", passage[starts[i - 1][0] : at]) is not None
    ]
    out = []
    for i, (at, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(passage)
        text = passage[at:end]
        cut = _CUT.search(text)
        text = text[: cut.start()] if cut else text
        head = text.split("\n", 1)[0]
        names = {key(name)} | (names_in(head) if len(head) <= _HEAD_CHARS else set())
        out.append(Entry(frozenset(names), text))
    return out if len({e.names for e in out}) > 1 else []


def _body(entry: Entry) -> str:
    """The entry's text without its names (``sqlite3_open_v2`` holds no amount)."""
    return " ".join(t for t in entry.text.split() if not is_name(t))


def _holds(entry: Entry, value: str) -> bool:
    plain = entry.text.lower().replace(",", "").replace("\\", "")
    # "3600" is in "(3600s)", not in "36000" or "3600.5".
    return re.search(rf"(?<![\w.]){re.escape(value)}(?!\.?\d)", plain) is not None


def wrong_entry(sentence: str, question: str, passages: Iterable[str]) -> bool:
    """Whether ``sentence`` (citing ``passages``) states a value of an entry other than the
    one it, or ``question``, names (see the module docstring)."""
    found = [e for p in passages for e in entries(p)]
    if not found:
        return False
    claim = claim_text(sentence)
    defined = frozenset().union(*(e.names for e in found))
    said = names_in(claim) & defined
    asked = names_in(question) & defined
    # A value here is a number or version (a default, a limit, a release): what a neighbouring
    # entry holds too, in another amount.
    stated = {v for v in values(claim) - values(question) if _AMOUNT.fullmatch(v)}
    if said & names_in(question):
        return bool(stated) and _elsewhere(stated, said, found)
    # The sentence's entry: the one it names, else the one holding its amounts.
    own = [e for e in found if e.names & said] if said else _holding(stated, found)
    if not own:
        return False
    # The question's entry: the one it names, else the one its words describe far better --
    # when it names nothing at all (a name no entry has: its entry is not here to compare),
    # and the sentence answers it (an aside naming another option is not an answer).
    if asked:
        meant = [e for e in found if e.names & asked]
    elif names_in(question) or (said and not _answers(claim, question)):
        return False
    else:
        meant = _described(question, own, found)
    if not meant or any(e in own for e in meant):
        return False
    return not any(_holds(e, v) for e in meant for v in stated)


def _answers(claim: str, question: str) -> bool:
    """The sentence holds most of the question's words ("The shorthand for a branch's upstream
    is …" for "What is the shorthand for a branch's upstream?")."""
    words = content_words(question)
    return len(words & content_words(claim)) * 2 >= len(words)


def _holding(stated: set[str], found: Sequence[Entry]) -> list[Entry]:
    """The entries holding one of the stated amounts."""
    return [e for e in found if any(_holds(e, v) for v in stated)]


def _described(question: str, own: Sequence[Entry], found: Sequence[Entry]) -> list[Entry]:
    """The entries whose text holds far more of the question's words than the sentence's own
    entry does ("which postsuper option requeues a message …": the entry that says "requeue",
    not ``-s``'s); [] when none stands out."""
    words = content_words(question)
    if len(words) < MIN_QUESTION_WORDS:
        return []

    def fit(entry: Entry) -> float:
        # A word of the question in the entry's name ("upstream" in ``@{upstream}``) says
        # most of what the entry is about: it counts twice.
        named = content_words(" ".join(re.sub(r"\W+", " ", n) for n in entry.names))
        return (len(words & content_words(entry.text)) + len(words & named)) / len(words)

    floor = max(fit(e) for e in own) + DESCRIBED_BY
    return [e for e in found if e not in own and fit(e) >= max(floor, DESCRIBED_AT)]


def _elsewhere(stated: set[str], named: set[str], found: Sequence[Entry]) -> bool:
    """A stated value is in no entry of ``named`` and in some other entry."""
    own = [e for e in found if e.names & named]
    other = [e for e in found if not e.names & named]
    # The named entry states an amount of its own (its default, "(default 2)"): one that
    # says nothing of amounts ("--auto: with this option …") may defer to another entry.
    if not any(_AMOUNT.search(_body(e)) for e in own):
        return False
    return any(
        not any(_holds(e, v) for e in own) and any(_holds(e, v) for e in other) for v in stated
    )


def checked(
    sentence: str,
    question: str,
    parts: Sequence[str],
    sources: Mapping[int, str],
    cites: Sequence[int],
) -> bool:
    """``wrong_entry`` for a marked sentence, against its cited sources: against each part of
    a question asking two things (a sentence may answer both: "gc.autoPackLimit is 50, and
    SQLite checkpoints at 1000 pages"), else against the question."""
    passages = [sources[n] for n in cites if n in sources]
    return bool(passages) and any(wrong_entry(sentence, q, passages) for q in parts or [question])
