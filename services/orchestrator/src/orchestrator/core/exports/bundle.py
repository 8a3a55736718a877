"""A run bundle: one zip file holding everything a run did, for checking and replaying offline.

A research run's bundle holds ``manifest.json`` (what it is, the settings a replay needs, what
the record dropped), ``run.json`` (the run's row and state: question, plan, findings, sources,
report, warnings, timings), ``events.jsonl`` (every numbered event it streamed),
``recording.jsonl`` (every call: prompts and model outputs, searches and results, pages read
with URL, final URL, content hash and text, passages and scores, judge verdicts; see
``recorder.py``), ``report.md`` and ``export.json`` (the JSON export: citations with passages).
A conversation's bundle holds its turns (questions, answers, sources and their passages).

No secret enters a bundle: every string is scrubbed of the server's keys and tokens (the LLM
and Brave API keys, the API tokens), of ``Bearer`` credentials and of credential-like URL
parameters (``?token=``, ``api_key=``, ``sig=`` …), whichever file it is in. Pure: no I/O.
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from pydantic import SecretStr

from orchestrator.config import Settings
from orchestrator.core.exports.document import Document
from orchestrator.core.exports.formats import to_json
from orchestrator.core.exports.recorder import decode_entries
from orchestrator.core.research.state import ResearchState
from orchestrator.core.sessions import Session
from orchestrator.core.store import RunRecord, StoredEvent

FORMAT = "quarry.bundle"
VERSION = 1
REDACTED = "[redacted]"
# The settings a replay needs to cut the report prompts as the run did.
REPLAY_SETTINGS = ("research_context_chars", "research_budget_s", "synthesis_reserve_s")
# Setting names whose string values are credentials.
_SECRET_NAME = re.compile(r"(key|token|secret|password|credential)s?$")
# A credential in a URL's query (?token=…, &api_key=…, &X-Amz-Signature=…) or a header value.
_SECRET_PARAM = re.compile(
    r"([?&#](?:[\w.-]*(?:token|key|secret|password|passwd|sig|signature|auth|session)[\w.-]*)=)"
    r"[^&#\s\"'<>()\[\]]+",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
# A zip entry's fixed time: a bundle's bytes depend on the run only.
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def secrets_of(settings: Settings) -> list[str]:
    """Every credential the server holds (longest first, so no shorter one splits it)."""
    out: set[str] = set()
    for name in type(settings).model_fields:
        value = getattr(settings, name, None)
        if isinstance(value, SecretStr):  # the keys are SecretStr: their repr is masked
            value = value.get_secret_value()
        if isinstance(value, str) and _SECRET_NAME.search(name):
            out |= {v.strip() for v in value.split(",") if len(v.strip()) >= 4}
    return sorted(out, key=len, reverse=True)


class Scrubber:
    """Removes the server's secrets and credential-looking values from any JSON value."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self._secrets = list(secrets)

    def text(self, value: str) -> str:
        """``value`` with every secret replaced by ``[redacted]``."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        value = _SECRET_PARAM.sub(lambda m: m.group(1) + REDACTED, value)
        return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", value)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return value


def _jsonl(rows: Iterable[Any]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def _manifest(kind: str, ident: str, created_at: float, **extra: Any) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "id": ident,
        "created_at": created_at,
        "bundled_at": time.time(),
        **extra,
    }


def research_bundle(
    record: RunRecord,
    state: ResearchState,
    events: Sequence[StoredEvent],
    doc: Document,
    settings: Settings,
) -> bytes:
    """A research run's bundle (a zip file)."""
    scrub = Scrubber(secrets_of(settings))
    entries = decode_entries(state.recording) if state.recording else [{}]
    head, recorded = entries[0], entries[1:]
    run = {
        "id": record.id,
        "query": record.query,
        "mode": record.mode,
        "status": record.status,
        "created_at": record.created_at,
        "finished_at": record.finished_at,
        "state": state.model_dump(mode="json", exclude={"recording"}),
    }
    manifest = _manifest(
        "research",
        record.id,
        record.created_at,
        status=record.status,
        settings={k: getattr(settings, k) for k in REPLAY_SETTINGS},
        recording={
            "entries": len(recorded),
            "dropped": int(head.get("dropped", 0)),
            "max_bytes": head.get("max_bytes", settings.bundle_max_bytes),
            "slimmed": sum(1 for e in recorded if e.get("omitted")),
            "complete": bool(state.recording)
            and not head.get("dropped")
            and not any(e.get("omitted") for e in recorded),
        },
        events=len(events),
    )
    files = {
        "manifest.json": orjson.dumps(scrub(manifest), option=orjson.OPT_INDENT_2),
        "run.json": orjson.dumps(scrub(run), option=orjson.OPT_INDENT_2),
        "events.jsonl": _jsonl(
            scrub({"seq": e.seq, "type": e.type, "data": e.data}) for e in events
        ),
        "recording.jsonl": _jsonl(scrub(e) for e in recorded),
        "report.md": scrub.text(doc.markdown).encode(),
        "export.json": orjson.dumps(scrub(orjson.loads(to_json(doc))), option=orjson.OPT_INDENT_2),
    }
    return _zip(files)


def session_bundle(session: Session, doc: Document, settings: Settings) -> bytes:
    """A conversation's bundle (a zip file): its turns with their sources and passages."""
    scrub = Scrubber(secrets_of(settings))
    manifest = _manifest("conversation", session.id, session.created, turns=len(session.turns))
    files = {
        "manifest.json": orjson.dumps(scrub(manifest), option=orjson.OPT_INDENT_2),
        "session.json": orjson.dumps(scrub(session.to_json()), option=orjson.OPT_INDENT_2),
        "report.md": scrub.text(doc.markdown).encode(),
        "export.json": orjson.dumps(scrub(orjson.loads(to_json(doc))), option=orjson.OPT_INDENT_2),
    }
    return _zip(files)
