"""Check an answer's ``[n]`` citations against the sources' text (pure, no I/O).

Small local models cite badly (measured: none wrote usable ``[n]``), so the engine checks:

* a number with no source is removed (``removed_citations``); if no other number in its group
  holds, the source that best supports the claim is cited instead (``added``);
* each citation is checked by lexical support against its clause (the text since the last
  , ; or :) and its sentence, whichever scores higher: the share of the claim's
  content words (lower-cased, accents folded, stop words dropped, plural ``s`` trimmed) that
  occur in the cited source. Below ``SUPPORT_THRESHOLD`` the citation is unsupported: it is
  replaced by the best source that does reach the threshold, or removed;
* a sentence with no citation gets the source that supports it best, if any reaches the
  threshold (``added``): small models often write no ``[n]`` at all, and every answer must
  point at its evidence;
* ``[1][2]``, ``[1, 2]``, ``[1-3]`` and ``[Source 1]`` are understood; the checked text writes
  every group as ``[1][2]``.

How the threshold was chosen: supported sentences share most of their content words with the
source (small models copy source sentences nearly verbatim; paraphrases keep the names and
numbers), while a source on the same topic but without the claimed fact shares only the topic
words. On the hand-made cases in tests/unit/test_citations.py supported sentences score
0.6 to 1.0 and same-topic wrong sources 0.2 to 0.4; 0.5 sits between with margin on both sides.
Sentences with fewer than ``MIN_WORDS`` content words ("Yes [1].") are too short to judge and
keep a citation whose source exists.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

SUPPORT_THRESHOLD = 0.5
MIN_WORDS = 2
# Ranges such as [1-3] longer than this are not ranges but typos or years ([1990-2020]).
MAX_RANGE = 10
# A bracketed number longer than this names no source (a report never has a million). It is
# read as ``_RUNAWAY``: a citation of no source, replaced like any other, but not recorded in
# ``removed_citations``, since "[1000…0]" from a looping small model would otherwise reach the
# JSON (and int() refuses more than 4300 digits).
MAX_DIGITS = 6
_RUNAWAY = -1

# A citation group: "[3]", "[1, 2]", "[1-3]" (or an en dash, \u2013), "[1 and 2]",
# "[Source 2]", "[source 1, source 4]".
_GROUP_RE = re.compile(
    r"\[(?:sources?\s*)?(\d+(?:\s*(?:,|-|\u2013|and|&)\s*(?:sources?\s*)?\d+)*)\]",
    re.IGNORECASE,
)
# One number or range inside a group body.
_PART_RE = re.compile(r"(\d+)\s*(?:[-\u2013]\s*(\d+))?")
# A sentence end: ., ! or ? followed by whitespace, a citation, a comma-like mark or the end
# (so not "3.5"), or a line break.
_END_RE = re.compile(r"[.!?]+(?=[\s\[,;:)]|$)|\n")
_WORD_RE = re.compile(r"[^\W_]+")
# English function words: they carry no claim, so they never count as support.
_STOP_TEXT = """
    a an the and or but if then than so of in on at to for from by with without about into
    over under after before between through during as is are was were be been being am do does
    did done have has had having it its this that these those there here which who whom
    whose what when where why how not no nor only also very can could may might must shall
    should will would i you he she we they them his her their our your my me us him itself
    such other another some any each every all both more most much many few one s
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())


@dataclass(frozen=True)
class CitationReport:
    """The checked answer and what changed (``replaced`` holds (old, new) pairs)."""

    text: str
    cited: list[int]
    removed_citations: list[int]
    replaced: list[tuple[int, int]]
    added: list[int] = field(default_factory=list)


def content_words(text: str) -> set[str]:
    """Normalised content words: lower-case, accents folded, stop words out, plural s cut."""
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    words = set()
    for word in _WORD_RE.findall(folded):
        if word in _STOP_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return words


def support(claim: set[str], source: set[str]) -> float:
    """Share of the claim's content words that occur in the source (0 for an empty claim)."""
    return len(claim & source) / len(claim) if claim else 0.0


def _numbers(body: str) -> list[int]:
    out: list[int] = []
    for m in _PART_RE.finditer(body):
        if len(m.group(1)) > MAX_DIGITS or len(m.group(2) or "") > MAX_DIGITS:
            out.append(_RUNAWAY)
            continue
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo <= hi <= lo + MAX_RANGE:
            out.extend(range(lo, hi + 1))
        else:
            out.extend([lo, hi])
    return list(dict.fromkeys(out))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans covering ``text``; citation groups right after a sentence end belong to
    that sentence (orchestrator/core/support.py marks each span, the answer stream emits them)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _END_RE.finditer(text):
        if m.start() < start:
            continue
        end = m.end()
        while True:  # absorb " [1][2]" after the full stop
            gap = len(text[end:]) - len(text[end:].lstrip(" \t"))
            group = _GROUP_RE.match(text, end + gap)
            if group is None:
                break
            end = group.end()
        spans.append((start, end))
        start = end
    if start < len(text):
        spans.append((start, len(text)))
    return _merge_wordless(text, spans)


def _merge_wordless(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join spans with no words ("?  [2]" left over) to the sentence before (or after) them."""
    merged: list[tuple[int, int]] = []
    carry: int | None = None  # start of wordless spans seen before any sentence
    for a, b in spans:
        if _WORD_RE.search(_GROUP_RE.sub(" ", text[a:b])) is None:
            if merged:
                merged[-1] = (merged[-1][0], b)
            elif carry is None:
                carry = a
            continue
        merged.append((a if carry is None else carry, b))
        carry = None
    if carry is not None:
        merged.append((carry, len(text)))
    return merged


@dataclass
class _Edits:
    cited: set[int] = field(default_factory=set)
    removed: list[int] = field(default_factory=list)
    replaced: list[tuple[int, int]] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    # (start, end, replacement) over the original text
    patches: list[tuple[int, int, str]] = field(default_factory=list)


def check_citations(answer: str, sources: Sequence[tuple[int, str]]) -> CitationReport:
    """Remove or fix citations ``sources`` (n, text) do not support; see the module doc."""
    words = {n: content_words(text) for n, text in sources}
    edits = _Edits()
    for start, end in sentence_spans(answer):
        groups = list(_GROUP_RE.finditer(answer, start, end))
        claim = content_words(_GROUP_RE.sub(" ", answer[start:end]))
        if groups:
            _check_sentence(answer, start, groups, claim, words, edits)
        else:
            _maybe_add(answer, start, end, claim, words, edits)
    text = answer
    for a, b, new in sorted(edits.patches, reverse=True):
        text = text[:a] + new + text[b:]
    return CitationReport(
        text=text,
        cited=sorted(edits.cited),
        removed_citations=sorted(set(edits.removed)),
        replaced=edits.replaced,
        added=edits.added,
    )


def _scores(claim: set[str], words: dict[int, set[str]]) -> dict[int, float]:
    return {n: support(claim, w) for n, w in words.items()}


def _check_sentence(
    answer: str,
    start: int,
    groups: list[re.Match[str]],
    sentence: set[str],
    words: dict[int, set[str]],
    edits: _Edits,
) -> None:
    """Decide each group's numbers; a group may be backed by its clause or by the sentence.

    In "Paris is in France [1], Berlin in Germany [2]." each citation covers its own clause,
    which the whole sentence would dilute. The clause runs from the last , ; or : before the
    group (or the sentence start); it does not depend on other groups, so checking a checked
    answer again changes nothing.
    """
    in_sentence: set[int] = set()
    for g in groups:
        head = _GROUP_RE.sub(" ", answer[start : g.start()]).rstrip(" ,;:")
        clause = content_words(re.split(r"[,;:]", head)[-1])
        claims = [c for c in (clause, sentence) if len(c) >= MIN_WORDS]
        scores = {n: max((support(c, w) for c in claims), default=0.0) for n, w in words.items()}
        asked = _numbers(g.group(1))
        keep = [n for n in asked if n in words and (not claims or scores[n] >= SUPPORT_THRESHOLD)]
        for n in asked:
            if n in keep:
                continue
            best = _best(scores, exclude=keep) if claims and not keep else None
            if best in in_sentence:  # "[2][9]": source 2 is already cited right here
                best = None
            if n not in words:
                if n != _RUNAWAY:
                    edits.removed.append(n)  # no such source; a supporting one takes its place
                if best is not None:
                    edits.added.append(best)
            elif best is not None:
                edits.replaced.append((n, best))
            else:
                edits.removed.append(n)
            if best is not None:
                keep.append(best)
        keep = list(dict.fromkeys(keep))
        in_sentence.update(keep)
        edits.cited.update(keep)
        new = "".join(f"[{n}]" for n in keep)
        a = g.start()
        if not new:  # drop the space before a removed group too ...
            while a > 0 and answer[a - 1] in " \t":
                a -= 1
            # ... unless words would then run together: "eyesore[1]The" -> "eyesore The"
            after = answer[g.end() : g.end() + 1]
            if a > 0 and after and not after.isspace() and after not in ".!?,;:)[":
                new = " "
        if new != g.group(0) or a != g.start():
            edits.patches.append((a, g.end(), new))


def _best(scores: dict[int, float], exclude: Iterable[int] = ()) -> int | None:
    skip = set(exclude)
    ranked = sorted(
        ((s, -n) for n, s in scores.items() if n not in skip and s >= SUPPORT_THRESHOLD),
        reverse=True,
    )
    return -ranked[0][1] if ranked else None


def _maybe_add(
    answer: str,
    start: int,
    end: int,
    claim: set[str],
    words: dict[int, set[str]],
    edits: _Edits,
) -> None:
    """Cite an uncited sentence with the source that supports it best (ties: the lower n)."""
    if len(claim) < MIN_WORDS + 1:
        return
    n = _best(_scores(claim, words))
    if n is None:
        return
    body = answer[start:end].rstrip()
    at = start + len(body)
    while at > start and answer[at - 1] in ".!?":  # before the full stop: "fact [1]."
        at -= 1
    if at == start:
        return
    edits.patches.append((at, at, f" [{n}]"))
    edits.cited.add(n)
    edits.added.append(n)


def cited_numbers(sentence: str) -> list[int]:
    """The source numbers a sentence cites, in order."""
    out: list[int] = []
    for g in _GROUP_RE.finditer(sentence):
        out.extend(n for n in _numbers(g.group(1)) if n != _RUNAWAY)
    return list(dict.fromkeys(out))


# Prose that names sources instead of citing them ("According to the information in Sources 1
# and 3, ..."): no part of the claim, and its numbers are no values of it.
_SOURCE_TALK_RE = re.compile(
    r"\b(?:according to\s+(?:the\s+)?(?:information\s+)?(?:(?:provided|given|found)\s+)?"
    r"(?:in\s+)?)?(?:both\s+)?(?:the\s+)?sources?\s+\d+(?:\s*(?:,|and|&)\s*\d+)*,?",
    re.IGNORECASE,
)


def claim_words(sentence: str) -> set[str]:
    """The content words of a sentence's claim (its citation groups and any prose naming
    sources left out)."""
    return content_words(claim_text(sentence))


def claim_text(sentence: str) -> str:
    """The sentence without its citation groups and prose naming sources by number."""
    return " ".join(_SOURCE_TALK_RE.sub(" ", strip_citations(sentence)).split())


_STRIP_RE = re.compile(r"[ \t]*(?:" + _GROUP_RE.pattern + ")", re.IGNORECASE)


def strip_citations(sentence: str) -> str:
    """The sentence with every citation group (and the space before it) removed."""
    return _STRIP_RE.sub("", sentence)
