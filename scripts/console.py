"""What `make run` shows on the terminal of a service's output: the services log JSON lines
(to ``$QUARRY_DATA_DIR/logs/<service>.log``); a person reads one line per warning or error."""

from __future__ import annotations

import json
from typing import Any

# Levels a person is shown; INFO and DEBUG stay in the log file.
SHOWN_LEVELS = frozenset({"WARNING", "ERROR", "CRITICAL"})
# Fields of every record (quarry_common.logconfig) that are not worth repeating on a terminal.
_ENVELOPE = frozenset({"ts", "level", "service", "logger", "msg", "trace_id", "span_id", "exc"})
# Long values (a URL, a query) are cut so that one record stays one terminal line.
_MAX_VALUE_CHARS = 80


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 1] + "…"


def problem_line(line: str) -> str | None:
    """The human line for one line of a service's output, or None when it is not shown.

    A JSON log record is shown only at WARNING or above, as ``level: message (key=value …)``
    plus the last line of its exception. Anything that is not a log record (a crash before
    logging started, a configuration error) is shown as it is.
    """
    text = line.strip()
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return text
    if not isinstance(record, dict):
        return text
    level = str(record.get("level", "")).upper()
    if level not in SHOWN_LEVELS:
        return None
    shown = f"{level.lower()}: {record.get('msg', '')}"
    details = " ".join(f"{k}={_value(v)}" for k, v in record.items() if k not in _ENVELOPE)
    if details:
        shown += f" ({details})"
    exc = str(record.get("exc") or "").strip()
    if exc:
        shown += f": {exc.splitlines()[-1]}"
    return shown
