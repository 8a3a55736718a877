"""How a checked answer ends: as the model wrote it, or with the engine saying the sources
don't say (orchestrator/core/support.py marks each sentence first).

Two signs that the sources do not hold the answer, whatever the model wrote:

* **no claim is backed**: every sentence that carries a claim is ``unsupported``;
* **the question names what no source mentions**: a flag, a dotted or underscored name, a
  call, an ALL-CAPS or camelCase name (``H3MaxStreams``, ``-gpu_threads``, ``WHIP``) that
  occurs in none of the sources cannot have been answered from them. Every sentence that
  repeats such a name is unsupported, whatever its citations. When no source mentions any
  of the question's names, or no sentence is left supported, the answer is the engine's "the
  sources don't say"; when some names are covered and some sentences backed (one part of a
  two-part question), the engine adds which names the sources do not mention. A small model
  answers a question about a
  directive that does not exist with a confident default ("H3MaxStreams defaults to 1024")
  and cites a neighbouring page that shares every other word: this is the check it cannot
  talk its way past.

A third sign concerns one part of a question asking two things ("Which pragma …, and what byte
limit …?"): when no sentence the sources back speaks to a part (none holds most of the words
that part has and the other lacks), the engine adds that the sources found don't answer it. The
model otherwise answered the part it had evidence for and guessed the other, uncited or cited
to the first part's page, and the answer read as whole.

A fourth concerns reference passages (option lists, config entries): a cited sentence that
states another entry's value, or answers with another entry than the one the question names or
describes, is unsupported (orchestrator/core/entries.py): its words and values are all in the
passage, so the support checks pass it.

In the first two cases the answer leads with the engine's note (quoting the passage that best
matches the question, when one shares most of its words) and the model's draft follows,
labelled.
Pure: no I/O.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from orchestrator.core.citations import (
    cited_numbers,
    content_words,
    sentence_spans,
    strip_citations,
    support,
)
from orchestrator.core.entries import checked as entry_checked
from orchestrator.core.support import (
    CAMEL_RE,
    CAPS_RE,
    VALUE_RE,
    SentenceMark,
    SupportReport,
)

# An extractive answer: a passage sentence holding this share of the question's content words.
EXTRACT_AT = 0.6
EXTRACT_CHARS = 400
# A part of a two-part question is spoken to by a backed sentence holding this share of the
# part's own words (those the other parts lack).
PART_WORDS_AT = 0.5
SOURCES_DONT_SAY = "The sources don't say."
# Before the model's draft when the engine says the sources don't say.
DRAFT_LABEL = "\n\nThe model's answer, which no source supports:\n\n"
# A name a question asks about: a value as core/support.py reads one (a flag, a dotted,
# underscored or slashed name, a call, an ALL-CAPS name; numbers are dropped in names()), or
# a camelCase name.
_NAME_RES = (VALUE_RE, CAPS_RE, CAMEL_RE)
_NUMBER = re.compile(r"[\d.,]+")
# Shorter than this once normalised ("-x", "e.g"): too common to say anything.
MIN_NAME_CHARS = 3
_NOT_NAMES = frozenset({"e.g", "i.e", "etc"})


def names(question: str) -> dict[str, str]:
    """The names ``question`` asks about: normalised (lower case, no leading dashes, no
    trailing "()", no markdown escapes) to as written, in the question's order."""
    found = sorted(
        (m.start(), -m.end(), m.group(0)) for rx in _NAME_RES for m in rx.finditer(question)
    )
    out: dict[str, str] = {}
    reach = 0
    for _start, neg_end, name in found:
        if -neg_end <= reach:  # inside a longer name: "autoPackLimit" of "gc.autoPackLimit"
            continue
        reach = max(reach, -neg_end)
        key = _key(name)
        if len(key) >= MIN_NAME_CHARS and key not in _NOT_NAMES and not _NUMBER.fullmatch(name):
            out.setdefault(key, name.rstrip("."))
    return out


def _key(name: str) -> str:
    return _plain(name).lstrip("-").removesuffix("()").rstrip(".")


def _plain(text: str) -> str:
    return text.lower().replace("\\", "")


def uncovered(question: str, sources: Mapping[int, str]) -> list[str]:
    """The names of ``question`` (as written) that occur in none of ``sources``; none when
    there are no sources (a model-only answer is labelled elsewhere)."""
    if not sources:
        return []
    text = _plain("\n".join(sources.values()))
    return [name for key, name in names(question).items() if key not in text]


def extractive(question: str, sources: Mapping[int, str]) -> tuple[int, str] | None:
    """The passage sentence that shares most of the question's content words, if it shares at
    least ``EXTRACT_AT`` of them: (source number, sentence)."""
    asked = content_words(question)
    if len(asked) < 2:
        return None
    best: tuple[float, int, int, str] | None = None
    for n, text in sources.items():
        sentences = [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]
        # A sentence and its successor too: "… SQLITE_MAX_LENGTH. The default value of this
        # macro is 1 billion" answers only as a pair.
        windows = sentences + [f"{x} {y}" for x, y in itertools.pairwise(sentences)]
        for window in windows:
            score = support(asked, content_words(window))
            if best is None or (score, -len(window)) > (best[0], -best[1]):
                best = (score, len(window), n, window)
    if best is None or best[0] < EXTRACT_AT:
        return None
    sentence = best[3]
    if len(sentence) > EXTRACT_CHARS:
        sentence = sentence[: EXTRACT_CHARS - 1].rstrip() + "…"
    return best[2], sentence


def sources_dont_say(question: str, sources: Mapping[int, str], missing: Sequence[str] = ()) -> str:
    """The engine's own opening for an answer nothing supports."""
    if missing:
        return f"{SOURCES_DONT_SAY} None of the sources found mentions {_listed(missing)}."
    quote = extractive(question, sources)
    if quote is None:
        return f"{SOURCES_DONT_SAY} None of the sources found supports the model's answer."
    n, sentence = quote
    return (
        f"{SOURCES_DONT_SAY} None of them supports the model's answer; "
        f"the closest passage, quoted as written [{n}]: \u201c{sentence}\u201d"
    )


def _listed(missing: Sequence[str]) -> str:
    quoted = [f"`{m}`" for m in missing]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def engine_note(text: str) -> SentenceMark:
    """Text the engine adds (no claim of the model's to check)."""
    return SentenceMark(text, cited_numbers(text), None, 0.0)


@dataclass(frozen=True)
class Ending:
    """How an answer ends: every sentence's mark, and the engine's note when it has one (a
    streamed face gets the note after the model's sentences; ``report`` shows it in place)."""

    report: SupportReport
    note: SentenceMark | None = None


def conclude(
    question: str,
    marks: Sequence[SentenceMark],
    sources: Mapping[int, str],
    parts: Sequence[str] = (),
) -> Ending:
    """The answer as shown (see the module docstring); ``parts``: the question's parts when it
    asks two things (core/ask/expand.py sub_questions)."""
    missing = uncovered(question, sources)
    marks = [_unbacked(m) if _mentions(m, missing) else m for m in marks]
    marks = [_unbacked(m) if _other_entry(m, question, parts, sources) else m for m in marks]
    report = SupportReport(marks)
    backed = any(m.support == "supported" for m in marks)
    # Every name the question asks about is missing: whatever else the model copied from the
    # sources, it is not about what was asked.
    asked_about_nothing_here = bool(missing) and len(missing) == len(names(question))
    if report.unsupported or (missing and not backed) or asked_about_nothing_here:
        note = sources_dont_say(question, sources, missing)
        shown = [engine_note(note), engine_note(DRAFT_LABEL), *marks]
        return Ending(SupportReport(shown), engine_note("\n\n" + note))
    notes = []
    if missing:
        notes.append(f"The sources found don't mention {_listed(missing)}.")
    if unsaid := unanswered(parts, marks):
        notes.append("The sources found don't answer: " + " ".join(unsaid))
    if notes:
        said = engine_note("\n\n" + " ".join(notes))
        return Ending(SupportReport([*marks, said]), said)
    return Ending(report)


def unanswered(parts: Sequence[str], marks: Sequence[SentenceMark]) -> list[str]:
    """The parts of a question asking two things that no backed sentence speaks to (see the
    module docstring); none for a question asking one thing."""
    if len(parts) < 2:
        return []
    words = [content_words(p) for p in parts]
    backed = [content_words(m.text) for m in marks if m.support in ("supported", "partly")]
    out = []
    for i, part in enumerate(parts):
        own = words[i].difference(*(w for j, w in enumerate(words) if j != i))
        if own and not any(support(own, said) >= PART_WORDS_AT for said in backed):
            out.append(part)
    return out


def _mentions(mark: SentenceMark, missing: Sequence[str]) -> bool:
    if mark.support is None or not missing:
        return False
    text = _plain(mark.text)
    return any(_key(m) in text for m in missing)


def _other_entry(
    mark: SentenceMark, question: str, parts: Sequence[str], sources: Mapping[int, str]
) -> bool:
    """A cited sentence stating another entry's value (core/entries.py)."""
    if mark.support not in ("supported", "partly") or not mark.citations:
        return False
    return entry_checked(mark.text, question, parts, sources, mark.citations)


def _unbacked(mark: SentenceMark) -> SentenceMark:
    """``mark`` as unsupported: it names what no source mentions, so no citation backs it."""
    return SentenceMark(strip_citations(mark.text), [], "unsupported", 0.0)
