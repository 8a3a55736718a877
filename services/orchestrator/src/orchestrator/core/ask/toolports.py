"""What the agent mode needs beyond the pipeline's ports: a document list, and a memory of
which models passed the tool-calling probe."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

from orchestrator.core.llm import LLMError, LLMTimeout, ToolCaller

_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression exactly.",
        "parameters": {
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        },
    },
}
_PROBE_QUESTION = "What is 1234 * 5678? Use the calculator tool; do not compute it yourself."


class DocumentLister(Protocol):
    """The local documents the index holds (the ``list_documents`` tool)."""

    async def list_documents(self, *, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` documents: at least ``id`` and ``title`` each.

        Raises:
            CorpusError: the index could not be asked.
        """
        ...


class ToolProbe:
    """Whether a model calls tools well enough for the agent mode, asked once per model.

    The probe offers one calculator tool and asks a multiplication: a model that answers with a
    well-formed call (valid JSON arguments naming ``expression``) passes. A definite answer is
    cached per (server, model); a timeout is not (the server may only have been busy).
    """

    def __init__(self) -> None:
        """An empty cache."""
        self._known: dict[tuple[str, str], bool] = {}
        self._lock = asyncio.Lock()

    def known(self, caller: ToolCaller) -> bool | None:
        """The cached verdict for ``caller``'s model, if any."""
        return self._known.get((caller.base_url, caller.model))

    async def passes(self, caller: ToolCaller, *, timeout: float) -> bool:
        """Probe ``caller`` (once per model; concurrent questions share one probe)."""
        key = (caller.base_url, caller.model)
        async with self._lock:
            if key in self._known:
                return self._known[key]
            try:
                reply = await caller.call_tools(
                    [{"role": "user", "content": _PROBE_QUESTION}],
                    [_PROBE_TOOL],
                    timeout=timeout,
                    max_tokens=128,
                )
            except (TimeoutError, LLMTimeout):
                return False
            except LLMError:
                self._known[key] = False  # e.g. HTTP 400: this model takes no tools
                return False
            self._known[key] = any(_well_formed(c.name, c.arguments) for c in reply.calls)
            return self._known[key]


def _well_formed(name: str, arguments: str) -> bool:
    if name != "calculator":
        return False
    try:
        args = json.loads(arguments)
    except ValueError:
        return False
    return isinstance(args, dict) and bool(str(args.get("expression", "")).strip())
