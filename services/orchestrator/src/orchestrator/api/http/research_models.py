"""Request bodies of the deep-research API (v1)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.http.models import SESSION_ID_PATTERN
from orchestrator.api.shared.options import DomainLists
from orchestrator.core.research.schemas import DIMENSION_CHARS

Dimension = Field(min_length=1, max_length=DIMENSION_CHARS)


class ResearchOptions(BaseModel):
    """Per-run options; each falls back to the server's setting when absent."""

    model_config = ConfigDict(extra="forbid")

    sources: list[Literal["web", "local"]] | None = Field(
        default=None, min_length=1, description="as for /v1/search; absent: ORCHESTRATOR_SOURCES"
    )
    domains: DomainLists | None = Field(default=None, description="as for /v1/search")


class ResearchRequest(BaseModel):
    """POST /v1/research."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000, description="what to research")
    mode: Literal["deep-research", "due-diligence"] = "deep-research"
    session_id: str | None = Field(
        default=None,
        pattern=SESSION_ID_PATTERN,
        description="the chat session a completed report adds its compacted context to",
    )
    options: ResearchOptions = Field(default_factory=ResearchOptions)


class ContinueRequest(BaseModel):
    """POST /v1/research/{id}/continue."""

    model_config = ConfigDict(extra="forbid")

    dimensions: list[str] | None = Field(
        default=None, min_length=1, max_length=6, description="replace the scoped dimensions"
    )


class EmptyRequest(BaseModel):
    """A body with nothing in it (``{}``)."""

    model_config = ConfigDict(extra="forbid")
