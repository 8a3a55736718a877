"""The agent mode's production wiring: the tool-calling client, the document list, the probe."""

from __future__ import annotations

from typing import Any

import httpx

from orchestrator.adapters.grpc.corpus import CorpusClient
from orchestrator.adapters.llm.factory import llm_options
from orchestrator.adapters.llm.tools import OpenAIToolCaller
from orchestrator.config import Settings
from orchestrator.core.ask.toolports import ToolProbe

LIST_TIMEOUT_S = 5.0


class IndexDocuments:
    """``list_documents`` over the index service's ListDocuments (ids, sizes, passages)."""

    def __init__(self, corpus: CorpusClient) -> None:
        """Ask ``corpus``."""
        self._corpus = corpus

    async def list_documents(self, *, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` documents, by id."""
        docs = await self._corpus.list_documents("", timeout=LIST_TIMEOUT_S)
        return [
            {"id": d.id, "title": d.id.rsplit("/", 1)[-1], "bytes": d.size, "passages": d.chunks}
            for d in sorted(docs.values(), key=lambda d: d.id)[:limit]
        ]


def agent_deps(settings: Settings, http: httpx.AsyncClient, corpus: CorpusClient) -> dict[str, Any]:
    """The Deps fields of the agent mode (Ollama too: it serves the OpenAI wire format)."""
    return {
        "tools_llm": OpenAIToolCaller(settings.llm_base_url, http, llm_options(settings)),
        "documents": IndexDocuments(corpus),
        "tool_probe": ToolProbe(),
    }
