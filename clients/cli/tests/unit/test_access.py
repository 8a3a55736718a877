"""`quarry` against a real HTTP server: it sends its token, and indexes a folder outside the
server's roots only after the user said yes (on a terminal) or with --allow-outside."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from quarry_cli import main as cli

DONE = {"root": "/outside", "status": "ok", "error": None, "total": 1, "done": 1, "added": 1}
OUTSIDE = {
    "type": "about:blank",
    "title": "Path not allowed",
    "status": 403,
    "detail": "/outside is outside the corpus roots (/srv/notes)",
    "code": "outside_roots",
}


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *_: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"auth": self.headers.get("Authorization"), "body": body})
        if not body.get("allow_outside"):
            self._send(403, "application/problem+json", json.dumps(OUTSIDE).encode())
            return
        lines = [{"seq": 0, "type": "refresh.completed", "data": DONE}]
        payload = "".join(json.dumps(x) + "\n" for x in lines).encode()
        self._send(200, "application/x-ndjson", payload)

    def _send(self, code: int, ctype: str, payload: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    _Handler.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Terminal(io.StringIO):
    """Standard input that claims to be a terminal, with the user's typed answer."""

    def isatty(self) -> bool:
        return True


def _run(
    url: str, *args: str, stdin: io.StringIO | None = None, env_token: str = ""
) -> tuple[int, str, str]:
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


def test_outside_the_roots_without_a_terminal_is_refused_with_a_hint(api: str) -> None:
    code, _, err = _run(api, "index", "/outside")
    assert code == cli.EXIT_USAGE
    assert "--allow-outside" in err
    assert [s["body"] for s in _Handler.seen] == [{"path": "/outside"}]  # asked once, no retry


def test_the_flag_sends_the_users_consent(api: str) -> None:
    code, out, _ = _run(api, "index", "--allow-outside", "/outside")
    assert code == cli.EXIT_OK
    assert "/outside: 1 files" in out
    assert [s["body"] for s in _Handler.seen] == [{"path": "/outside", "allow_outside": True}]


@pytest.mark.parametrize(("answer", "indexed"), [("y\n", True), ("\n", False), ("no\n", False)])
def test_a_terminal_asks_the_user_first(api: str, answer: str, indexed: bool) -> None:
    code, _, err = _run(api, "index", "/outside", stdin=_Terminal(answer))
    assert "Index /outside anyway? [y/N]" in err
    bodies = [s["body"] for s in _Handler.seen]
    if indexed:
        assert code == cli.EXIT_OK
        assert bodies == [{"path": "/outside"}, {"path": "/outside", "allow_outside": True}]
    else:
        assert code == cli.EXIT_USAGE
        assert bodies == [{"path": "/outside"}]


def test_the_token_goes_in_the_authorization_header(api: str) -> None:
    _run(api, "--token", "t" * 20, "index", "--allow-outside", "/outside")
    _run(api, "index", "--allow-outside", "/outside", env_token="e" * 20)
    _run(api, "index", "--allow-outside", "/outside")
    assert [s["auth"] for s in _Handler.seen] == [f"Bearer {'t' * 20}", f"Bearer {'e' * 20}", None]
