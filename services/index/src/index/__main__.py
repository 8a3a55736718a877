"""Entry point: `python -m index`."""

from __future__ import annotations

import asyncio
import logging

from quarry_common import logconfig, telemetry
from quarry_common.grpc_server import serve_until_signal
from quarry_common.settings import load_settings

from index.config import Settings
from index.dense import load_embedder
from index.server import build_server


def main() -> None:
    """Load settings, configure logging and tracing, load the embedder, serve until SIGTERM."""
    settings = load_settings(Settings)
    logconfig.configure("index", settings.log_level)
    logging.getLogger("bm25s").setLevel(max(logging.WARNING, logging.getLogger().level))
    tel = telemetry.setup("index", instruments=("grpc_server",))
    try:
        embedder = load_embedder(settings.dense, threads=settings.cpu_concurrency)
        asyncio.run(
            serve_until_signal(build_server(settings, embedder=embedder), settings.shutdown_grace_s)
        )
    finally:
        tel.shutdown()


if __name__ == "__main__":
    main()
