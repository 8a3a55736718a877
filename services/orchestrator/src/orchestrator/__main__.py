"""Entry point: `python -m orchestrator`."""

from __future__ import annotations

import signal
from types import FrameType

import uvicorn
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from quarry_common import logconfig, telemetry
from quarry_common.settings import load_settings

from orchestrator.app import create_app
from orchestrator.config import Settings


class _Server(uvicorn.Server):
    """uvicorn re-raises a captured SIGTERM after shutdown (exit -15); a requested stop is clean."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True


def main() -> None:
    """Load settings, configure logging and tracing, serve HTTP until SIGTERM."""
    settings = load_settings(Settings)
    logconfig.configure("orchestrator", settings.log_level)
    tel = telemetry.setup("orchestrator", instruments=("grpc_client", "httpx"))
    app = create_app(settings)
    FastAPIInstrumentor.instrument_app(app, excluded_urls="healthz,readyz")
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_s)),
    )
    try:
        _Server(config).run()
    finally:
        tel.shutdown()


if __name__ == "__main__":
    main()
