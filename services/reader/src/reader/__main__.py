"""Entry point: `python -m reader`."""

from __future__ import annotations

import asyncio

from quarry_common import logconfig, telemetry
from quarry_common.grpc_server import serve_until_signal
from quarry_common.settings import load_settings

from reader.config import Settings
from reader.server import build_server


def main() -> None:
    """Load settings, configure logging and tracing, serve until SIGTERM."""
    settings = load_settings(Settings)
    logconfig.configure("reader", settings.log_level)
    tel = telemetry.setup("reader", instruments=("grpc_server",))
    try:
        asyncio.run(serve_until_signal(build_server(settings), settings.shutdown_grace_s))
    finally:
        tel.shutdown()


if __name__ == "__main__":
    main()
