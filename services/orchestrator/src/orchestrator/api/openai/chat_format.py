"""Pure mapping between Quarry runs and OpenAI chat-completion shapes (no I/O, no FastAPI).

Citations ``[n]`` become Markdown footnote references ``[^n]`` and the sources follow the answer
as footnote definitions, so any Markdown renderer that knows GFM footnotes links each claim to
its source; clients that do not still read a numbered list. The same sources travel as a
structured ``sources`` field beside ``choices``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from orchestrator.core.sessions import Turn

_CITE = re.compile(r"\[(\d{1,3})\]")
# A citation cut by a stream delta: "[" or "[12" at the very end of the text so far.
_PARTIAL = re.compile(r"\[\d{0,3}$")
# The footnote block this module appends (an assistant turn sent back by a client carries it).
_FOOTNOTES = re.compile(r"\n*(?:^\[\^\d+\]: .*$\n?)+\Z", re.MULTILINE)
_FOOTNOTE_REF = re.compile(r"\[\^(\d{1,3})\]")


def to_footnote_refs(text: str) -> str:
    """``[n]`` → ``[^n]``."""
    return _CITE.sub(r"[^\1]", text)


class FootnoteStream:
    """Rewrites citations in streamed deltas, holding back a citation cut between deltas."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, delta: str) -> str:
        """The rewritten text that can be sent now."""
        text = self._pending + delta
        cut = _PARTIAL.search(text)
        if cut:
            self._pending, text = text[cut.start() :], text[: cut.start()]
        else:
            self._pending = ""
        return to_footnote_refs(text)

    def flush(self) -> str:
        """Whatever was held back (the stream ended)."""
        text, self._pending = self._pending, ""
        return to_footnote_refs(text)


def _escape(text: str) -> str:
    return " ".join(text.split()).replace("[", r"\[").replace("]", r"\]")


def footnotes(sources: Sequence[dict[str, Any]]) -> str:
    """The sources as footnote definitions, preceded by a blank line; empty without sources."""
    lines = []
    for src in sources:
        title = _escape(str(src.get("title") or src.get("url", "")))
        url = str(src.get("url", "")).replace(" ", "%20").replace(")", "%29")
        lines.append(f"[^{src['n']}]: [{title}]({url})")
    return ("\n\n" + "\n".join(lines)) if lines else ""


def message_text(content: str | Sequence[dict[str, Any]] | None) -> str:
    """The text of a message's content: a string, or the text parts of a parts list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text") or "") for p in content if p.get("type") == "text")


def strip_footnotes(answer: str) -> str:
    """An earlier answer as Quarry wrote it: footnote block removed, ``[^n]`` back to ``[n]``."""
    return _FOOTNOTE_REF.sub(r"[\1]", _FOOTNOTES.sub("", answer)).strip()


def history_from_messages(messages: Sequence[tuple[str, str]]) -> list[Turn]:
    """Earlier (role, text) messages as session turns: each user message with the reply after it.

    System and tool messages are not part of the conversation Quarry plans over; a user message
    without a reply becomes a turn with an empty answer.
    """
    turns: list[Turn] = []
    question: str | None = None
    for role, text in messages:
        if role == "user":
            if question is not None:
                turns.append(Turn(question, "", (), "answered", 0.0))
            question = text
        elif role == "assistant" and question is not None:
            turns.append(Turn(question, strip_footnotes(text), (), "answered", 0.0))
            question = None
    if question is not None:
        turns.append(Turn(question, "", (), "answered", 0.0))
    return turns
