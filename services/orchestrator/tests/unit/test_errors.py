"""Domain errors carry kinds; each face maps every kind once, at its edge."""

from __future__ import annotations

import orjson
import pytest
from orchestrator.api.mcp.errors import tool_error
from orchestrator.api.shared.problems import HTTP_STATUS, domain_problem, openai_problem_for
from orchestrator.core.errors import DomainError, ErrorKind, TooManyResearchRuns


def test_every_kind_has_an_http_status_and_no_kind_is_a_server_error() -> None:
    assert set(HTTP_STATUS) == set(ErrorKind)
    assert all(400 <= status < 500 or status == 503 for status in HTTP_STATUS.values())


def test_a_subclass_carrying_an_http_status_fails_at_definition() -> None:
    with pytest.raises(TypeError, match="kind, not an HTTP status"):

        class Teapot(DomainError):
            status = 418


def test_a_capped_run_is_a_429_with_retry_after_on_http_and_openai_and_says_when_on_mcp() -> None:
    err = TooManyResearchRuns("2 research runs are already in flight.", retry_after_s=30)
    plain = domain_problem(err, instance="/v1/research")
    assert plain.status_code == 429
    assert plain.headers["Retry-After"] == "30"
    body = orjson.loads(bytes(plain.body))
    assert body["title"] == "Too many research runs"
    assert body["instance"] == "/v1/research"
    openai = openai_problem_for(err)
    assert openai.status_code == 429
    assert openai.headers["Retry-After"] == "30"
    assert orjson.loads(bytes(openai.body))["error"]["type"] == "rate_limit_error"
    assert str(tool_error(err)) == "2 research runs are already in flight. Retry in 30 s."


def test_a_machine_readable_code_reaches_the_problem_and_the_openai_error() -> None:
    class Off(DomainError):
        kind = ErrorKind.INVALID
        code = "search_off"

    err = Off("Web search is off.")
    assert orjson.loads(bytes(domain_problem(err).body))["code"] == "search_off"
    openai = orjson.loads(bytes(openai_problem_for(err).body))["error"]
    assert openai == {
        "message": "Web search is off.",
        "type": "invalid_request_error",
        "code": "search_off",
    }
    assert "Retry" not in str(tool_error(err))
