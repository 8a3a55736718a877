"""The MCP edge of the domain errors: a tool error whose text the caller (a model) reads."""

from __future__ import annotations

from orchestrator.api.mcp.backend import ToolError
from orchestrator.core.errors import DomainError


def tool_error(err: DomainError) -> ToolError:
    """The tool error for a refused call: the detail, and when to retry if the error says."""
    if err.retry_after_s is not None:
        return ToolError(f"{err.detail} Retry in {err.retry_after_s} s.")
    return ToolError(err.detail)
