"""`quarry research` follows a run through broken streams (tenacity's back-off), not through a
server that is not there."""

from __future__ import annotations

import io
from typing import Any

import httpx
import pytest
from quarry_cli import research as cli_research

_CLIENT: Any = None  # _stream_once is replaced: no request is sent


PAUSES: list[float] = []


def _script(monkeypatch: pytest.MonkeyPatch, failures: list[Exception]) -> list[int]:
    calls: list[int] = []
    PAUSES.clear()

    def stream_once(client: Any, run_id: str, state: Any, err: Any, quiet: bool) -> None:
        calls.append(state.last_id)
        if failures:
            state.last_id += 5  # events arrived before the break: the next call resumes there
            raise failures.pop(0)
        state.final = "research.completed"

    monkeypatch.setattr(cli_research, "_stream_once", stream_once)
    monkeypatch.setattr(cli_research, "_pause", PAUSES.append)
    return calls


def test_a_broken_stream_resumes_after_the_last_event_after_a_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _script(monkeypatch, [httpx.ReadError("reset"), httpx.RemoteProtocolError("cut")])
    err = io.StringIO()
    state = cli_research._follow(_CLIENT, "r1", err, quiet=True)
    assert state.final == "research.completed"
    assert calls == [-1, 4, 9]
    assert err.getvalue().count("reconnecting") == 2
    assert len(PAUSES) == 2
    assert all(0 < p <= 9 for p in PAUSES)  # exponential with jitter, capped at 8 s (+1)


def test_a_server_that_refuses_connections_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _script(monkeypatch, [httpx.ConnectError("refused")])
    with pytest.raises(httpx.ConnectError):
        cli_research._follow(_CLIENT, "r1", io.StringIO(), quiet=True)
    assert len(calls) == 1


def test_the_reconnects_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    failures: list[Exception] = [httpx.ReadError("reset")] * (cli_research.RECONNECTS + 1)
    calls = _script(monkeypatch, failures)
    with pytest.raises(httpx.ReadError):
        cli_research._follow(_CLIENT, "r1", io.StringIO(), quiet=True)
    assert len(calls) == cli_research.RECONNECTS + 1
