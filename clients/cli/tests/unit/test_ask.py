"""The quarry CLI against a real HTTP server that speaks the API's NDJSON and JSON formats."""

from __future__ import annotations

import json

import pytest
from quarry_cli import main as cli

from clients.cli.tests.unit.conftest import (
    FakeApi,
    Reply,
    Script,
    Seen,
    as_json,
    events,
    problem,
    run_cli,
)
from tests.conftest import free_port

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


@pytest.fixture
def api(fake_api: FakeApi) -> FakeApi:
    """The ask endpoint: a question over 2000 characters is refused (problem+json), and
    ``Accept: application/json`` gets the final object instead of the event stream."""

    def respond(request: Seen) -> Reply:
        if len(request.body["query"]) > 2000:
            return problem(422, {"title": "x", "detail": "too long"})
        if request.accept == "application/json":
            status = fake_api.script[-1][1].get("status", "error")
            return as_json({"answer": "Quarry is an answer engine [1].", "status": status})
        return events(fake_api.script)

    fake_api.script = ANSWERED
    fake_api.respond = respond
    return fake_api


def test_answer_streams_then_sources(api: FakeApi) -> None:
    api.script = ANSWERED
    code, out, err = api.run("ask", "what is quarry", "--session", "s1")
    assert code == cli.EXIT_OK
    assert out.startswith("Quarry is an answer engine [1].")
    assert "*[1] A" in out
    assert " [2] B" in out
    assert "reading 2/2 pages" in err
    assert "warning: engine x did not answer" in err
    sent = api.seen[0]
    assert sent.accept == "application/x-ndjson"
    assert sent.body == {"query": "what is quarry", "session_id": "s1"}


def test_clarify_exits_3_with_the_question(api: FakeApi) -> None:
    api.script = CLARIFY
    code, out, _ = api.run("ask", "quarry?")
    assert code == cli.EXIT_CLARIFY
    assert out.strip() == "Which Quarry do you mean?"


def test_error_event_exits_1(api: FakeApi) -> None:
    api.script = FAILED
    code, _, err = api.run("ask", "q")
    assert code == cli.EXIT_FAILED
    assert "LLM at http://x down" in err


def test_json_prints_the_final_object(api: FakeApi) -> None:
    api.script = ANSWERED
    code, out, _ = api.run("ask", "q", "--json", "--sources", "web,local")
    assert code == cli.EXIT_OK
    assert json.loads(out)["status"] == "answered"
    assert api.seen[0].body["options"] == {"sources": ["web", "local"]}
    assert api.seen[0].accept == "application/json"


def test_problem_response_is_a_usage_error(api: FakeApi) -> None:
    code, _, err = api.run("ask", "x" * 2001)
    assert code == cli.EXIT_USAGE
    assert "too long" in err


def test_unreachable_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, _, err = run_cli(url, "ask", "q")
    assert code == cli.EXIT_UNREACHABLE
    assert url in err


def test_bad_usage_exits_2() -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["ask", "--mode", "fast"])
    assert exc.value.code == cli.EXIT_USAGE
    # no question (and no --regenerate): the same exit status, saying why
    assert cli.main(["ask"]) == cli.EXIT_USAGE
    code, _, err = run_cli("http://127.0.0.1:1", "ask", "   ")
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
def test_show_thinking_prints_it_on_stderr_only(api: FakeApi, show: bool) -> None:
    api.script = THINKING
    flags = ["--show-thinking"] if show else []
    code, out, err = api.run("ask", "tides?", *flags)
    assert code == cli.EXIT_OK
    assert out.startswith("Tides follow the Moon.")
    assert "weighing" not in out
    assert ("thinking: weighing the Moon against the Sun" in err) is show
