"""Step 9: number the sources, stream the answer, check each sentence's citations as it
completes and mark how well its sources support it (orchestrator/core/support.py)."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import replace
from typing import Any

from orchestrator.core.ask.domain import Evidence, RankerUnavailable
from orchestrator.core.ask.fusion import origin_of
from orchestrator.core.ask.ports import Checked
from orchestrator.core.ask.state import RunState
from orchestrator.core.citations import strip_citations
from orchestrator.core.ending import conclude, engine_note
from orchestrator.core.errors import RunFailed
from orchestrator.core.support import (
    SentenceMark,
    SentenceStream,
    SupportReport,
    mark_sentence,
    model_claims,
    with_model_marks,
)
from orchestrator.core.think import Thought

logger = logging.getLogger(__name__)

EXCERPT_CHARS = 300
# A last piece of text that ends no sentence and has at least this many words was cut short
# (a token or time budget), not a list item or a label.
FRAGMENT_WORDS = 6
_ENDS = (".", "!", "?", ":", ";", ")", '"', "'", "`", "*", "]", ">", "…")
# A line that may end without a full stop: a list item, a table row, a heading, a URL.
_ITEM = re.compile(r"(?:[-*+•]|\d+[.)]|\||#|https?://)\s*")
# Citation markers alone in a paragraph of their own ("… 2500 packets.\n\n[1]"): they cite no
# sentence, yet the sentence cutter glues them to the one before, which then reads as cited.
_DANGLING = re.compile(r"\n[ \t]*\n\s*(?:\[\d+(?:\s*[,\u2013-]\s*\d+)*\]\s*)+$")


def number_sources(evidence: Sequence[Evidence]) -> list[Evidence]:
    """One source per distinct URL, in the order given (so source n is ``result[n-1]``)."""
    seen: dict[str, Evidence] = {}
    for item in evidence:
        if item.url not in seen:
            seen[item.url] = item
    return list(seen.values())


def with_dates(sources: Sequence[Evidence], state: RunState) -> list[Evidence]:
    """Sources with the publication date their search result gave, so the model can prefer
    recent pages and the UI can show dates."""
    dates = {h.url: h.published for h in state.hits if h.published}
    return [
        s if s.published or s.url not in dates else replace(s, published=dates[s.url])
        for s in sources
    ]


def source_list(sources: Sequence[Evidence]) -> list[dict[str, Any]]:
    """The `sources` event payload: ``[{n, url, title, excerpt, origin, passages}]``, n = 1..N;
    ``passages`` are the texts the model saw for the source."""
    return [
        {
            "n": n,
            "url": s.url,
            "title": s.title,
            "excerpt": _excerpt(s.text),
            "origin": origin_of(s.url),
            "published": s.published,
            "passages": list(s.parts),
            # A local PDF's pages, so a citation can say "p. 3" (only when known).
            **({"pages": list(s.pages)} if s.pages else {}),
        }
        for n, s in enumerate(sources, start=1)
    ]


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"


async def synthesise(state: RunState, evidence: Sequence[Evidence]) -> tuple[Checked, list[Any]]:
    """Emit `sources`, stream `answer.delta`s, emit the checked `answer.completed`.

    The stream stops at the question's deadline (with a warning); what was written by then is
    still checked and returned.
    """
    sources = with_dates(state.clip(number_sources(evidence)), state)
    listed = source_list(sources)
    state.sink.emit("sources", {"sources": listed})
    with state.stage("synthesis", sources=len(sources)) as span:
        state.llm_calls += 1
        stream = state.deps.brain.answer(
            state.question,
            sources,
            state.history,
            timeout=state.deadline.remaining(),
            boundary=state.boundary,
            detail=state.options.detail,
        )
        checker = SentenceChecker(state.deps.brain.check, sources)
        _, marks = await stream_answer(state, stream, mark=checker.mark)
        marks, by = await model_marks(state, marks, checker.numbered)
        span.set_attribute("ae.support_checker", by)
        ending = conclude(state.question, marks, checker.numbered, state.parts)
        if ending.note is not None:
            # Streamed faces get the engine's note last (they cannot take text back); the
            # final answer leads with it (see core/ending.py).
            emit_sentence(state, list(marks), ending.note)
        report = ending.report
        checked = checker.checked(report)
        span.set_attribute("ae.cited", len(checked.cited))
        span.set_attribute("ae.removed_citations", len(checked.removed_citations))
        if report.score is not None:
            span.set_attribute("ae.support_score", report.score)
    emit_completed(state, checked, report)
    return checked, listed


async def model_marks(
    state: RunState, marks: list[SentenceMark], sources: dict[int, str]
) -> tuple[list[SentenceMark], str]:
    """The answer's cited sentences re-marked by the ranker's support model (CheckSupport),
    all in one call once the stream has ended, within ORCHESTRATOR_SUPPORT_CHECK_TIMEOUT_S;
    the lexical marks as they are when it is off, down, or late. Returns the marks and which
    checker gave them ("model" or "lexical")."""
    claims = model_claims(marks, sources)
    limit = min(state.settings.support_check_timeout_s, state.deadline.remaining())
    if not claims or limit <= 0:
        return marks, "lexical"
    try:
        async with asyncio.timeout(limit):
            verdicts = await state.deps.ranker.check_support(
                [(sentence, passages) for _, sentence, passages in claims], timeout=limit
            )
    except (RankerUnavailable, TimeoutError) as err:
        logger.info("support model unavailable; lexical marks kept", extra={"error": str(err)})
        return marks, "lexical"
    return with_model_marks(marks, claims, [(v.score, v.label) for v in verdicts]), "model"


class SentenceChecker:
    """Checks each sentence's citations as it completes (with ``check``, the brain's citation
    check), then marks its support. Pure: bench/eval/replay.py runs it over stored answers."""

    def __init__(
        self, check: Callable[[str, Sequence[Evidence]], Checked], sources: Sequence[Evidence]
    ) -> None:
        self._check = check
        self._sources = list(sources)
        self.numbered = {n: s.text for n, s in enumerate(sources, start=1)}
        self._removed: list[int] = []
        self._replaced: list[dict[str, int]] = []
        self._added: list[int] = []
        self._in_code = False

    def mark(self, sentence: str) -> SentenceMark:
        """Check and mark one sentence; the parts of it inside a code block stay as written.

        Code is quoted, not claimed: never checked, never given an [n] (a citation added to a
        line of a code block breaks the code). A fence line has no words, so it comes glued to
        the sentence before it: the sentence is cut at each fence.
        """
        if "```" not in sentence and not self._in_code:
            return self._prose(_DANGLING.sub("", sentence))
        parts = sentence.split("```")
        marks: list[SentenceMark] = []
        for i, part in enumerate(parts):
            if i:
                self._in_code = not self._in_code
            if self._in_code or not part.strip():
                marks.append(SentenceMark(part, [], None, 0.0))
            else:
                marks.append(self._prose(part))
        claims = [m for m in marks if m.support is not None]
        text = "```".join(m.text for m in marks)
        if not claims:
            return SentenceMark(text, [], None, 0.0)
        first = claims[0]
        cites = [n for m in claims for n in m.citations]
        return SentenceMark(text, list(dict.fromkeys(cites)), first.support, first.score)

    def _prose(self, sentence: str) -> SentenceMark:
        checked = self._check(sentence, self._sources)
        self._removed.extend(checked.removed_citations)
        self._replaced.extend(checked.replaced)
        self._added.extend(checked.added_citations)
        return mark_sentence(checked.text, self.numbered)

    def checked(self, report: SupportReport) -> Checked:
        cited = sorted({n for s in report.sentences for n in s.citations})
        return Checked(
            text="".join(s.text for s in report.sentences),
            cited=cited,
            removed_citations=sorted(set(self._removed)),
            replaced=self._replaced,
            added_citations=self._added,
        )


def kept_rest(rest: list[str], text: str, *, timed_out: bool, after: bool) -> list[str]:
    """The stream's last pieces as shown: none when they are a sentence cut off mid-way and
    full sentences came ``after`` which to end (half a sentence reads as a claim it is not)."""
    return [] if rest and after and cut_short(rest[0], text, timed_out) else rest


def cut_short(rest: str, text: str, timed_out: bool) -> bool:
    """Whether the stream's last piece, ``rest`` (the end of ``text``), is a sentence cut off
    mid-way (outside code): it ends no sentence and was cut by the time budget, is long,
    follows a finished sentence on its line ("… is omitted. If on"), or is a line of its own
    that is no list item, table row, heading or URL and follows no label (a page title echoed
    as a footer, "For"). A small model copying a passage stops where the passage was cut."""
    if text.count("```") % 2:  # inside a code block: code is kept as written
        return False
    bare = strip_citations(rest).rstrip()
    if not bare or bare.endswith(_ENDS):
        return False
    tail = rest.strip()
    whole = text.rstrip()
    before = whole[: -len(tail)] if whole.endswith(tail) else ""
    mid_line = before.rstrip(" ").endswith(_ENDS)  # a newline between them ends with "\n"
    # A line of its own after a label ("Example:") is what the label introduces.
    own_line = before.rstrip(" ").endswith("\n") and not before.rstrip().endswith(":")
    own_line = own_line and not _ITEM.match(tail)
    return timed_out or mid_line or own_line or len(bare.split()) >= FRAGMENT_WORDS


def emit_sentence(state: RunState, marks: list[SentenceMark], mark: SentenceMark) -> None:
    """Record ``mark`` and emit it as an `answer.sentence` event."""
    marks.append(mark)
    state.sink.emit("answer.sentence", {"index": len(marks) - 1, **mark.as_dict()})


def emit_completed(state: RunState, checked: Checked, report: SupportReport | None = None) -> None:
    """The `answer.completed` event for a checked answer (with its sentences' support marks)."""
    state.sink.emit(
        "answer.completed",
        {
            "text": checked.text,
            "cited": checked.cited,
            "removed_citations": checked.removed_citations,
            "replaced": checked.replaced,
            "added_citations": checked.added_citations,
            **(report or SupportReport()).as_event(),
        },
    )


async def _relay(state: RunState, stream: AsyncIterator[str], write: Callable[[str], None]) -> bool:
    """Pass the model's visible deltas to ``write`` (thoughts become `thinking` events) until
    the stream ends or the question's deadline; True when the deadline cut it short."""
    try:
        async with asyncio.timeout(state.deadline.remaining()):
            async for delta in stream:
                if not delta:
                    continue
                if isinstance(delta, Thought):
                    state.sink.emit("thinking", {"text": str(delta)})
                    continue
                write(delta)
    except TimeoutError:
        return True
    finally:
        # Closing the generator closes the LLM's HTTP stream now, not at garbage collection.
        if isinstance(stream, AsyncGenerator):
            await stream.aclose()
    return False


async def stream_answer(
    state: RunState,
    stream: AsyncIterator[str],
    prefix: str = "",
    mark: Callable[[str], SentenceMark] | None = None,
) -> tuple[str, list[SentenceMark]]:
    """Emit the model's deltas as `answer.delta`s (``prefix`` before the first) and each
    completed sentence, checked by ``mark``, as an `answer.sentence`; return the whole text and
    the sentences' marks.

    The stream stops at the question's deadline (with a warning); what was written by then is
    kept. A model that sent no visible text at all ends the run with a clear error instead of
    an empty answer.

    Raises:
        RunFailed: ``no_answer`` when not one answer token arrived.
    """
    parts: list[str] = []
    marks: list[SentenceMark] = []
    cutter = SentenceStream()

    def sentences(texts: list[str]) -> None:
        for text in texts:
            emit_sentence(state, marks, mark(text) if mark else engine_note(text))

    def write(delta: str) -> None:
        if prefix and not parts:
            parts.append(prefix)
            state.sink.emit("answer.delta", {"text": prefix})
            sentences(cutter.feed(prefix))
        parts.append(delta)
        state.sink.emit("answer.delta", {"text": delta})
        sentences(cutter.feed(delta))

    timed_out = await _relay(state, stream, write)
    rest = cutter.flush()
    text = "".join(parts)
    sentences(kept_rest(rest, text, timed_out=timed_out, after=bool(marks)))
    if not text[len(prefix) :].strip():
        why = "before the time budget ran out" if timed_out else "(an empty reply)"
        raise RunFailed(
            "no_answer",
            f"The model at {state.deps.brain.llm_url} sent no answer {why}; "
            "try again, or check the LLM server.",
        )
    if timed_out:
        state.sink.warn(
            "budget_exhausted", "The time budget ran out while writing; the answer is cut short."
        )
    return text, marks
