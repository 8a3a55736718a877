"""A stand-in for the Quarry API that the CLI's unit tests share: a real HTTP server on 127.0.0.1
answering in the server's wire formats (NDJSON event streams, JSON, problem+json refusals) and
recording each request the CLI sent. A test file sets what it answers (``FakeApi.script`` for
an event stream, ``FakeApi.respond`` for anything else); everything else lives here once."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from quarry_cli import main as cli

Script = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Seen:
    """One request the CLI sent: its path, JSON body and the headers the tests look at."""

    path: str
    body: dict[str, Any]
    accept: str | None
    auth: str | None


@dataclass(frozen=True)
class Reply:
    """What the stand-in answers: a status, a content type and the bytes of the body."""

    status: int
    content_type: str
    payload: bytes


def events(script: Script) -> Reply:
    """The server's NDJSON event stream: one ``{"seq", "type", "data"}`` object a line."""
    lines = [json.dumps({"seq": i, "type": t, "data": d}) for i, (t, d) in enumerate(script)]
    return Reply(200, "application/x-ndjson", ("\n".join(lines) + "\n").encode())


def as_json(document: dict[str, Any]) -> Reply:
    """A plain JSON answer (what `Accept: application/json` gets)."""
    return Reply(200, "application/json", json.dumps(document).encode())


def problem(status: int, document: dict[str, Any]) -> Reply:
    """A refusal as the server sends it: RFC 9457 problem+json."""
    return Reply(status, "application/problem+json", json.dumps(document).encode())


class FakeApi:
    """The running stand-in: its base URL, the requests it saw, and what it answers."""

    def __init__(self) -> None:
        self.url = ""
        self.seen: list[Seen] = []
        self.script: Script = []
        self.respond: Callable[[Seen], Reply] = lambda _request: events(self.script)

    def run(
        self, *args: str, stdin: io.StringIO | None = None, env_token: str = ""
    ) -> tuple[int, str, str]:
        """`quarry --url <this server> *args`: its exit status, stdout and stderr."""
        return run_cli(self.url, *args, stdin=stdin, env_token=env_token)


def run_cli(
    url: str, *args: str, stdin: io.StringIO | None = None, env_token: str = ""
) -> tuple[int, str, str]:
    """Run `quarry --url url *args` in-process (no token in the environment unless given)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stderr", err)
        mp.setattr("sys.stdin", stdin or io.StringIO(""))
        if env_token:
            mp.setenv("QUARRY_API_TOKEN", env_token)
        else:
            mp.delenv("QUARRY_API_TOKEN", raising=False)
        code = cli.main(["--url", url, *args], out=out)
    return code, out.getvalue(), err.getvalue()


def _handler(fake: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen = Seen(
                self.path, body, self.headers.get("Accept"), self.headers.get("Authorization")
            )
            fake.seen.append(seen)
            reply = fake.respond(seen)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.payload)))
            self.end_headers()
            self.wfile.write(reply.payload)

    return Handler


@pytest.fixture
def fake_api() -> Iterator[FakeApi]:
    """A fresh stand-in per test (its own handler class: no state shared between tests)."""
    fake = FakeApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
