"""compose.yaml parses and passes the hardening policy; the policy itself catches violations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.policy.compose_policy import (
    COMPOSE_FILE,
    interpolate,
    load,
    published_host_ips,
    variables,
    violations,
)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load()


def test_compose_passes_the_policy(compose: dict[str, Any]) -> None:
    assert violations(compose) == []


def test_core_services_and_tracing_profile(compose: dict[str, Any]) -> None:
    services = compose["services"]
    core = {n for n, s in services.items() if not s.get("profiles")}
    assert core == {"reader", "ranker", "index", "orchestrator", "searxng", "ollama", "ollama-pull"}
    assert {n for n, s in services.items() if s.get("profiles") == ["tracing"]} == {
        "otel-collector",
        "jaeger",
    }


def test_only_orchestrator_and_jaeger_publish_and_only_on_loopback(
    compose: dict[str, Any],
) -> None:
    published = {
        name: [ip for ip, _ in published_host_ips(svc)]
        for name, svc in compose["services"].items()
        if svc.get("ports")
    }
    assert published == {"orchestrator": ["127.0.0.1"], "jaeger": ["127.0.0.1"]}


def test_orchestrator_keeps_its_database_on_the_named_volume(compose: dict[str, Any]) -> None:
    orch = compose["services"]["orchestrator"]
    assert orch["read_only"] is True
    assert "quarry-data:/data" in orch["volumes"]
    assert orch["environment"]["ORCHESTRATOR_DATA_DIR"] == "/data/orchestrator"


def test_ranker_and_index_have_no_route_out(compose: dict[str, Any]) -> None:
    assert compose["networks"]["backend"]["internal"] is True
    assert compose["services"]["ranker"]["networks"] == ["backend"]
    assert compose["services"]["index"]["networks"] == ["backend"]


def test_the_index_keeps_its_data_on_a_named_volume_and_the_ranker_is_stateless(
    compose: dict[str, Any],
) -> None:
    index = compose["services"]["index"]
    assert index["read_only"] is True
    assert index["volumes"] == ["quarry-data:/data"]
    assert index["environment"]["INDEX_DATA_DIR"] == "/data/index"
    assert index["environment"]["OTEL_SERVICE_NAME"] == "index"
    assert "quarry-data" in compose["volumes"]
    ranker = compose["services"]["ranker"]
    assert "volumes" not in ranker
    assert not any(k.startswith("RANKER_DATA") for k in ranker["environment"])
    assert compose["services"]["orchestrator"]["environment"]["INDEX_ADDR"] == "index:50053"


def test_every_interpolated_variable_is_in_env_example() -> None:
    env_example = (COMPOSE_FILE.parent / ".env.example").read_text()
    declared = {line.split("=", 1)[0] for line in env_example.splitlines() if "=" in line}
    declared = {d for d in declared if not d.startswith("#")}
    assert variables(COMPOSE_FILE.read_text()) - declared == set()


def _break(compose: dict[str, Any], service: str, **changes: Any) -> list[str]:
    bad = copy.deepcopy(compose)
    for key, value in changes.items():
        if value is None:
            bad["services"][service].pop(key, None)
        else:
            bad["services"][service][key] = value
    return violations(bad)


@pytest.mark.parametrize(
    ("service", "changes", "expected"),
    [
        ("reader", {"read_only": None}, "reader: read_only must be true"),
        ("ranker", {"cap_drop": ["NET_RAW"]}, "ranker: cap_drop must contain ALL"),
        ("searxng", {"cap_add": ["CHOWN"]}, "searxng: cap_add is not allowed"),
        ("ollama", {"security_opt": None}, "ollama: security_opt must contain no-new-privileges"),
        ("orchestrator", {"mem_limit": None}, "orchestrator: mem_limit missing"),
        ("reader", {"pids_limit": None}, "reader: pids_limit must be a positive integer"),
        ("ranker", {"restart": "no"}, "ranker: restart must be one of"),
        ("reader", {"logging": {"driver": "json-file"}}, "reader: logging must rotate"),
        ("orchestrator", {"ports": ["8080:8080"]}, "published beyond 127.0.0.1"),
        ("orchestrator", {"ports": ["0.0.0.0:8080:8080"]}, "published beyond 127.0.0.1"),
        ("orchestrator", {"ports": [{"target": 8080, "published": 8080}]}, "beyond 127.0.0.1"),
        ("reader", {"ports": ["127.0.0.1:50051:50051"]}, "reader: must be internal only"),
        ("searxng", {"image": "docker.io/searxng/searxng:latest"}, "is not pinned by @sha256"),
        ("ollama", {"image": "ollama/ollama"}, "ollama: image 'ollama/ollama' is not pinned"),
        (
            "orchestrator",
            {"depends_on": {"reader": {"condition": "service_started"}}},
            "orchestrator: depends_on reader needs condition service_healthy",
        ),
        (
            "ranker",
            {"healthcheck": {"test": ["CMD-SHELL", "nc -z 127.0.0.1 50052"]}},
            "ranker: health check only tests a TCP connect",
        ),
        ("reader", {"healthcheck": None}, "reader: healthcheck missing"),
        (
            "searxng",
            {"environment": {"SEARXNG_SECRET": "hunter2"}},
            "searxng: SEARXNG_SECRET must come from",
        ),
        ("searxng", {"user": None}, "searxng: must run as its non-root user"),
        ("jaeger", {"profiles": None}, "jaeger: must sit behind the tracing profile"),
        ("ollama", {"network_mode": "host"}, "ollama: network_mode host is not allowed"),
        ("index", {"volumes": ["./data:/data"]}, "index: must mount exactly one named volume"),
        ("index", {"volumes": None}, "index: must mount exactly one named volume"),
        (
            "index",
            {"environment": {"INDEX_DATA_DIR": "/var/index"}},
            "index: INDEX_DATA_DIR must lie on its volume",
        ),
        ("ranker", {"volumes": ["quarry-data:/data"]}, "ranker: must be stateless"),
        ("index", {"ports": ["127.0.0.1:50053:50053"]}, "index: must be internal only"),
        (
            "orchestrator",
            {"depends_on": {"reader": {"condition": "service_healthy"}}},
            "orchestrator: must wait for index to be healthy",
        ),
        (
            "orchestrator",
            {"volumes": ["./corpus:/corpus:ro"]},
            "orchestrator: ORCHESTRATOR_DATA_DIR must lie on a named volume",
        ),
    ],
)
def test_policy_catches(
    compose: dict[str, Any], service: str, changes: dict[str, Any], expected: str
) -> None:
    found = _break(compose, service, **changes)
    assert any(expected in problem for problem in found), found


def test_interpolation_uses_defaults_and_marks_required() -> None:
    assert interpolate("127.0.0.1:${QUARRY_PORT:-8080}:8080") == "127.0.0.1:8080:8080"
    assert interpolate("${QUARRY_PORT:-8080}", {"QUARRY_PORT": "9000"}) == "9000"
    assert interpolate("${QUARRY_PORT:-8080}", {"QUARRY_PORT": ""}) == "8080"
    assert interpolate("${SEARXNG_SECRET:?set it}") == "<required:SEARXNG_SECRET>"
    assert variables("${A} ${B:-x} $${C}") >= {"A", "B"}
