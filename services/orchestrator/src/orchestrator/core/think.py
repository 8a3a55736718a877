"""Remove ``<think>…</think>`` reasoning blocks from model output, whole or streamed."""

from __future__ import annotations

import re

OPEN = "<think>"
CLOSE = "</think>"
# A complete block, or an unterminated one running to the end of the text.
_BLOCK_RE = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)


def strip_think(text: str) -> str:
    """Return ``text`` without reasoning blocks.

    Some chat templates put the opening tag in the prompt, so the output starts inside the
    block and shows only ``</think>``: everything up to that stray closing tag goes too.
    """
    text = _BLOCK_RE.sub("", text)
    if CLOSE in text:
        text = text.rsplit(CLOSE, 1)[1]
    return text.strip()


def _partial_suffix(buf: str, tag: str) -> int:
    """Length of the longest suffix of ``buf`` that is a proper prefix of ``tag``."""
    for size in range(min(len(buf), len(tag) - 1), 0, -1):
        if tag.startswith(buf[-size:]):
            return size
    return 0


class Thought(str):
    """A piece of a reasoning model's thinking (never part of the answer).

    A ``str`` so a stream stays a stream of text; consumers that forward thinking tell it apart
    with ``isinstance(delta, Thought)``.
    """

    __slots__ = ()


class ThinkFilter:
    """Streaming-safe remover: tags may be split across deltas (``"<thi"``, ``"nk>"``).

    What was inside the blocks is kept aside: :meth:`take_thoughts` hands it out.
    """

    def __init__(self) -> None:
        self._buf = ""
        self._inside = False
        self._after_block = False  # drop the blank lines models put after </think>
        self._thoughts: list[str] = []

    def take_thoughts(self) -> str:
        """The thinking seen since the last call."""
        out, self._thoughts = "".join(self._thoughts), []
        return out

    def feed(self, delta: str) -> str:
        """Take one delta; return the text that is safe to show now."""
        self._buf += delta
        out: list[str] = []
        while self._buf:
            tag = CLOSE if self._inside else OPEN
            at = self._buf.find(tag)
            if at >= 0:
                if not self._inside:
                    out.append(self._visible(self._buf[:at]))
                else:
                    self._thoughts.append(self._buf[:at])
                self._buf = self._buf[at + len(tag) :]
                self._inside = not self._inside
                self._after_block = True
                continue
            keep = _partial_suffix(self._buf, tag)
            if not self._inside:
                out.append(self._visible(self._buf[: len(self._buf) - keep]))
            else:
                self._thoughts.append(self._buf[: len(self._buf) - keep])
            self._buf = self._buf[len(self._buf) - keep :]
            break
        return "".join(out)

    def flush(self) -> str:
        """End of stream: a dangling partial tag outside a block is ordinary text."""
        rest, self._buf = self._buf, ""
        return "" if self._inside else self._visible(rest)

    def _visible(self, text: str) -> str:
        if self._after_block and text:
            text = text.lstrip()
            if text:
                self._after_block = False
        return text
