"""Entry point: `python -m orchestrator`."""

from __future__ import annotations

import signal
import sys
from types import FrameType

import uvicorn
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from quarry_common import logconfig, telemetry
from quarry_common.settings import EXIT_BAD_CONFIG, load_settings

from orchestrator.api.http.server import server_config
from orchestrator.api.shared.security import ConfigError, check_bind, load_tokens
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
    try:
        tokens = load_tokens(settings)
        check_bind(settings, tokens)
    except ConfigError as err:
        sys.stderr.write(f"invalid configuration: {err}\n")
        raise SystemExit(EXIT_BAD_CONFIG) from None
    logconfig.configure("orchestrator", settings.log_level)
    tel = telemetry.setup("orchestrator", instruments=("grpc_client", "httpx"))
    app = create_app(settings, tokens=tokens)
    FastAPIInstrumentor.instrument_app(app, excluded_urls="healthz,readyz")
    config = server_config(app, settings)
    try:
        _Server(config).run()
    finally:
        tel.shutdown()


if __name__ == "__main__":
    main()
