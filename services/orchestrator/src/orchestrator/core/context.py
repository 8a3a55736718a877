"""Per-run context carried through a task tree (pure: no transport).

``RUN_KEY`` names the run a task works for; the reader client sends it as gRPC metadata so the
reader shares its extraction workers fairly between runs. It lives here, not in the client, so
the agent loop can set it without importing a transport.
"""

from __future__ import annotations

from contextvars import ContextVar

RUN_KEY: ContextVar[str] = ContextVar("quarry_run_key", default="")
