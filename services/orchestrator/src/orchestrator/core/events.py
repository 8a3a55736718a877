"""The event protocol of a run: numbered events, their wire encodings and the final result."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Final, Literal

#: Bumped on any incompatible change to event names or fields (see docs/api.md).
API_VERSION: Final = "1"

EventType = Literal[
    "run.started",
    "memory",
    "progress",
    "plan",
    "clarify",
    "search.started",
    "search.completed",
    "rank.completed",
    "judge",
    "read.started",
    "read.completed",
    "chunks.ranked",
    "policy",
    "sources",
    "thinking",
    "answer.delta",
    "answer.sentence",
    "answer.completed",
    "warning",
    "error",
    "run.completed",
]

RunStatus = Literal["answered", "clarify", "from_history", "error"]


@dataclass(frozen=True, slots=True)
class Event:
    """One event: ``seq`` counts from 0 within a run."""

    seq: int
    type: EventType
    data: dict[str, Any]


class EventSink:
    """Numbers a run's events and hands them, in order, to one consumer."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._seq = 0
        self._warned: set[str] = set()
        self._started = False
        self._pending: list[tuple[str, str]] = []
        self.closed = False

    def emit(self, type_: EventType, data: dict[str, Any]) -> Event:
        """Number and queue one event (ignored once the sink is closed)."""
        event = Event(self._seq, type_, data)
        if not self.closed:
            self._seq += 1
            self._queue.put_nowait(event)
            if type_ == "run.started":
                self._started = True
                for code, message in self._pending:
                    self.warn(code, message)
        return event

    def warn(self, code: str, message: str) -> None:
        """Emit a `warning`, once per code per run."""
        if code not in self._warned:
            self._warned.add(code)
            self.emit("warning", {"code": code, "message": message})

    def warn_after_start(self, code: str, message: str) -> None:
        """A warning from outside the run (e.g. a rate-limit notice): right after `run.started`."""
        if self._started:
            self.warn(code, message)
        else:
            self._pending.append((code, message))

    async def get(self) -> Event | None:
        """The next event, or None at the end (safe to cancel: nothing is lost)."""
        return await self._queue.get()

    def close(self) -> None:
        """End the stream: the consumer stops after the events already queued."""
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[Event]:
        while (event := await self._queue.get()) is not None:
            yield event


class ResultCollector:
    """Folds a run's events into the final result object (``Accept: application/json``)."""

    def __init__(self) -> None:
        self.result: dict[str, Any] = {
            "api_version": API_VERSION,
            "run_id": None,
            "session_id": None,
            "status": "error",
            "answer": "",
            "sources": [],
            "cited": [],
            "removed_citations": [],
            "added_citations": [],
            # each sentence with its citations and support mark; the share of claims supported
            "sentences": [],
            "support_score": None,
            "clarifying_question": None,
            "warnings": [],
            # what the source policy dropped (the `policy` events' entries), and its rules
            "policy": {"rules": None, "dropped": []},
            "error": None,
            "stats": {},
        }

    def add(self, event: Event) -> None:
        """Take one event into account."""
        data, result = event.data, self.result
        if event.type == "run.started":
            result["run_id"] = data.get("run_id")
            result["session_id"] = data.get("session_id")
        elif event.type == "sources":
            result["sources"] = data["sources"]
        elif event.type == "answer.completed":
            result["answer"] = data["text"]
            result["cited"] = data["cited"]
            result["removed_citations"] = data["removed_citations"]
            result["added_citations"] = data.get("added_citations", [])
            result["sentences"] = data.get("sentences", [])
            result["support_score"] = data.get("support_score")
        elif event.type == "clarify":
            result["clarifying_question"] = data["question"]
        elif event.type == "policy":
            result["policy"]["rules"] = data.get("rules")
            result["policy"]["dropped"].extend(data.get("dropped", []))
        elif event.type == "warning":
            result["warnings"].append(data)
        elif event.type == "error":
            result["error"] = data
        elif event.type == "run.completed":
            result["status"] = data["status"]
            result["stats"] = {k: v for k, v in data.items() if k != "status"}
