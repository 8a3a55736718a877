"""deploy/otelcol-config.yaml: every pipeline component is defined, and traces reach Jaeger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.policy.compose_policy import load

CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "otelcol-config.yaml"


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    data = yaml.safe_load(CONFIG.read_text())
    assert isinstance(data, dict)
    return data


def test_pipeline_components_are_defined(config: dict[str, Any]) -> None:
    service = config["service"]
    for name in service.get("extensions", []):
        assert name in config["extensions"], name
    for pipeline in service["pipelines"].values():
        for kind in ("receivers", "processors", "exporters"):
            for name in pipeline.get(kind, []):
                assert name in config[kind], f"{kind}: {name}"


def test_traces_go_from_otlp_to_jaeger(config: dict[str, Any]) -> None:
    traces = config["service"]["pipelines"]["traces"]
    assert traces["receivers"] == ["otlp"]
    # memory_limiter first, as the collector's docs ask, so it can refuse data before the OOM.
    assert traces["processors"][0] == "memory_limiter"
    grpc = config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    assert grpc.endswith(":4317")
    exporters = [config["exporters"][name] for name in traces["exporters"]]
    assert any(e.get("endpoint") == "jaeger:4317" for e in exporters)


def test_compose_mounts_this_config_and_services_can_reach_the_collector() -> None:
    services = load()["services"]
    collector = services["otel-collector"]
    assert (
        "./deploy/otelcol-config.yaml:/etc/otelcol-contrib/config.yaml:ro" in collector["volumes"]
    )
    assert "4317" in collector["expose"]
    for name in ("reader", "ranker", "index", "orchestrator"):
        assert set(collector["networks"]) & set(services[name]["networks"]), name
