"""Entry point: `python -m ranker`."""

from __future__ import annotations

import asyncio
import logging

from quarry_common import logconfig, telemetry
from quarry_common.grpc_server import serve_until_signal
from quarry_common.settings import load_settings

from ranker.config import Settings
from ranker.server import build_server


def main() -> None:
    """Load settings, configure logging and tracing, serve until SIGTERM."""
    settings = load_settings(Settings)
    logconfig.configure("ranker", settings.log_level)
    # bm25s sets its own logger to DEBUG at import and logs every index build: one JSON
    # line per RankChunks call. Hold it to the service's level, and at least WARNING.
    logging.getLogger("bm25s").setLevel(max(logging.WARNING, logging.getLogger().level))
    tel = telemetry.setup("ranker", instruments=("grpc_server",))
    try:
        asyncio.run(serve_until_signal(build_server(settings), settings.shutdown_grace_s))
    finally:
        tel.shutdown()


if __name__ == "__main__":
    main()
