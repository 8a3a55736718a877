"""The quarry CLI against a real HTTP server that speaks the API's NDJSON and JSON formats."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from quarry_cli import main as cli

from tests.conftest import free_port

Script = list[tuple[str, dict[str, Any]]]

ANSWERED: Script = [
    ("run.started", {"api_version": "1"}),
    ("search.started", {"query": "what is quarry", "round": 1}),
    ("search.completed", {"count": 2}),
    ("read.started", {"urls": ["http://a.example/", "http://b.example/"]}),
    ("read.completed", {"url": "http://a.example/", "status": "OK", "ms": 12}),
    ("read.completed", {"url": "http://b.example/", "status": "OK", "ms": 15}),
    ("warning", {"code": "unresponsive_engines", "message": "engine x did not answer"}),
    (
        "sources",
        {
            "sources": [
                {"n": 1, "url": "http://a.example/", "title": "A", "excerpt": "a"},
                {"n": 2, "url": "http://b.example/", "title": "B", "excerpt": "b"},
            ]
        },
    ),
    ("answer.delta", {"text": "Quarry is an answer engine "}),
    ("answer.delta", {"text": "[9]."}),
    # the engine checked the sentence: [9] named no source, [1] supports it
    ("answer.sentence", {"index": 0, "text": "Quarry is an answer engine [1].", "citations": [1]}),
    ("answer.completed", {"text": "Quarry is an answer engine [1].", "cited": [1]}),
    ("run.completed", {"status": "answered"}),
]
CLARIFY: Script = [
    ("run.started", {}),
    ("clarify", {"question": "Which Quarry do you mean?"}),
    ("run.completed", {"status": "clarify"}),
]
FAILED: Script = [
    ("run.started", {}),
    ("error", {"code": "llm", "message": "LLM at http://x down"}),
]


class _Handler(BaseHTTPRequestHandler):
    script: ClassVar[Script] = ANSWERED
    seen: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *_: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"body": body, "accept": self.headers.get("Accept")})
        if len(body["query"]) > 2000:
            self._send(422, "application/problem+json", b'{"title":"x","detail":"too long"}')
            return
        if self.headers.get("Accept") == "application/json":
            status = type(self).script[-1][1].get("status", "error")
            result = {"answer": "Quarry is an answer engine [1].", "status": status}
            self._send(200, "application/json", json.dumps(result).encode())
            return
        lines = [
            json.dumps({"seq": i, "type": t, "data": d}) for i, (t, d) in enumerate(self.script)
        ]
        self._send(200, "application/x-ndjson", ("\n".join(lines) + "\n").encode())

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


def _run(url: str, *args: str) -> tuple[int, str, str]:
    out = io.StringIO()
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stderr", err)
        code = cli.main(["--url", url, *args], out=out)
    return code, out.getvalue(), err.getvalue()


def test_answer_streams_then_sources(api: str) -> None:
    _Handler.script = ANSWERED
    code, out, err = _run(api, "ask", "what is quarry", "--session", "s1")
    assert code == cli.EXIT_OK
    assert out.startswith("Quarry is an answer engine [1].")
    assert "*[1] A" in out
    assert " [2] B" in out
    assert "reading 2/2 pages" in err
    assert "warning: engine x did not answer" in err
    sent = _Handler.seen[0]
    assert sent["accept"] == "application/x-ndjson"
    assert sent["body"] == {"query": "what is quarry", "session_id": "s1"}


def test_clarify_exits_3_with_the_question(api: str) -> None:
    _Handler.script = CLARIFY
    code, out, _ = _run(api, "ask", "quarry?")
    assert code == cli.EXIT_CLARIFY
    assert out.strip() == "Which Quarry do you mean?"


def test_error_event_exits_1(api: str) -> None:
    _Handler.script = FAILED
    code, _, err = _run(api, "ask", "q")
    assert code == cli.EXIT_FAILED
    assert "LLM at http://x down" in err


def test_json_prints_the_final_object(api: str) -> None:
    _Handler.script = ANSWERED
    code, out, _ = _run(api, "ask", "q", "--json", "--sources", "web,local")
    assert code == cli.EXIT_OK
    assert json.loads(out)["status"] == "answered"
    assert _Handler.seen[0]["body"]["options"] == {"sources": ["web", "local"]}
    assert _Handler.seen[0]["accept"] == "application/json"


def test_problem_response_is_a_usage_error(api: str) -> None:
    code, _, err = _run(api, "ask", "x" * 2001)
    assert code == cli.EXIT_USAGE
    assert "too long" in err


def test_unreachable_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, _, err = _run(url, "ask", "q")
    assert code == cli.EXIT_UNREACHABLE
    assert url in err


def test_bad_usage_exits_2() -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["ask", "--mode", "fast"])
    assert exc.value.code == cli.EXIT_USAGE
    # no question (and no --regenerate): the same exit status, saying why
    assert cli.main(["ask"]) == cli.EXIT_USAGE
    code, _, err = _run("http://127.0.0.1:1", "ask", "   ")
    assert code == cli.EXIT_USAGE
    assert "empty" in err


THINKING: Script = [
    ("run.started", {}),
    ("sources", {"sources": []}),
    ("thinking", {"text": "weighing the Moon "}),
    ("thinking", {"text": "against the Sun"}),
    ("answer.delta", {"text": "Tides follow the Moon."}),
    ("answer.completed", {"text": "Tides follow the Moon.", "cited": []}),
    ("run.completed", {"status": "answered"}),
]


@pytest.mark.parametrize("show", [True, False])
def test_show_thinking_prints_it_on_stderr_only(api: str, show: bool) -> None:
    _Handler.script = THINKING
    flags = ["--show-thinking"] if show else []
    code, out, err = _run(api, "ask", "tides?", *flags)
    assert code == cli.EXIT_OK
    assert out.startswith("Tides follow the Moon.")
    assert "weighing" not in out
    assert ("thinking: weighing the Moon against the Sun" in err) is show
