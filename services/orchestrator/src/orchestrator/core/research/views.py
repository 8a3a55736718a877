"""How the API shows a run: the JSON view, the list entry, the Markdown export, the follow-up."""

from __future__ import annotations

from typing import Any

from orchestrator.core.research.state import ResearchState
from orchestrator.core.store import RunRecord

FOLLOW_UP_FINDINGS = 6


def summary(record: RunRecord) -> dict[str, Any]:
    """One entry of the run list."""
    return {
        "research_id": record.id,
        "owner": record.owner,
        "query": record.query,
        "mode": record.mode,
        "status": record.status,
        "phase": record.phase,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "finished_at": record.finished_at,
        # the conversation the run's report joins (the web UI lists the pair once)
        "session_id": record.session_id,
    }


def view(record: RunRecord, state: ResearchState) -> dict[str, Any]:
    """``GET /v1/research/{id}``."""
    return {
        **summary(record),
        "completed_phase": state.completed_phase,
        "brief": state.brief,
        "dimensions": [d.model_dump() for d in state.dimensions],
        "findings": [f.model_dump() for f in state.findings],
        "sources": [s.public() for s in state.sources],
        "report": state.report_so_far(record.query),
        "evaluations": state.evaluations,
        "counters": state.counters.model_dump(),
        "timings_ms": state.timings_ms,
        "warnings": state.warnings,
        "policy": {"rules": state.domains_opt, "dropped": state.policy_dropped},
        "error": state.error,
        "last_event_id": record.last_seq,
    }


def report_markdown(record: RunRecord, state: ResearchState) -> str:
    """The report so far, with the source list when the report has none yet."""
    report = state.report_so_far(record.query) or f"# {record.query}\n\n(No report yet.)\n"
    if state.report:
        return report
    sources = "\n".join(f"[{s.n}] [{s.title or s.url}]({s.url})" for s in state.sources)
    return f"{report.rstrip()}\n\n## Sources\n\n{sources or '(none yet)'}\n"


def compacted(query: str, state: ResearchState) -> str:
    """The context a chat follow-up starts from: query, dimensions, top key findings."""
    dims = "; ".join(d.title for d in state.dimensions)
    lines = [f"- {f.title}: {f.key_finding}" for f in state.findings[:FOLLOW_UP_FINDINGS]]
    return f"Research report on: {query}\nDimensions: {dims}\nKey findings:\n" + "\n".join(lines)
