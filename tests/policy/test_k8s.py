"""deploy/k8s renders offline with `kubectl kustomize`, validates against the Kubernetes JSON
schemas (kubernetes-validate, shipped in its wheel) and passes the policy in k8s_policy.py:
hardening as compose has it, probes, resources, PDBs, autoscaling, default-deny networking."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate import utils as kv_utils

from tests.policy import compose_policy
from tests.policy.k8s_policy import (
    CALLERS,
    GRPC_SERVICES,
    INTERNET,
    K8S,
    RENDERS,
    ROOT,
    allows,
    components_selected,
    containers,
    kubectl,
    named,
    of_kind,
    pod_spec,
    render,
    violations,
)

Objects = list[dict[str, Any]]
#: Custom resources: no schema ships for them; their fields are checked by the tests below.
CUSTOM_KINDS = {"ScaledObject"}
#: The oldest release the manifests target (gRPC probes are GA from 1.27) and the newest schemas.
SCHEMA_VERSIONS = ("1.27", kv_utils.latest_version())

pytestmark = pytest.mark.skipif(
    kubectl() is None,
    reason="kubectl is not installed (it renders deploy/k8s offline with `kubectl kustomize`; "
    "install Debian's or your cluster vendor's kubectl package: make does not)",
)


@pytest.fixture(scope="module")
def renders() -> dict[str, Objects]:
    return {overlay: render(overlay) for overlay in RENDERS}


@pytest.fixture(scope="module")
def base(renders: dict[str, Objects]) -> Objects:
    return renders["base"]


def _workload(objects: Objects, name: str) -> dict[str, Any]:
    found = [
        w for w in of_kind(objects, "Deployment", "StatefulSet") if w["metadata"]["name"] == name
    ]
    assert len(found) == 1, name
    return found[0]


def _container(objects: Objects, name: str) -> dict[str, Any]:
    container: dict[str, Any] = pod_spec(_workload(objects, name))["containers"][0]
    return container


@pytest.mark.parametrize("overlay", RENDERS)
def test_every_render_passes_the_policy(renders: dict[str, Objects], overlay: str) -> None:
    assert violations(renders[overlay]) == []


@pytest.mark.parametrize("version", SCHEMA_VERSIONS)
def test_every_object_matches_the_kubernetes_schema(
    renders: dict[str, Objects], version: str
) -> None:
    """Strict: an unknown field (a misspelt probe, say) fails as well as a wrong type. Each
    distinct object once (the overlays repeat the base's)."""
    distinct = {json.dumps(o, sort_keys=True): o for objects in renders.values() for o in objects}
    unchecked = set()
    for obj in distinct.values():
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kv_utils.SchemaNotFoundError:
            unchecked.add(obj["kind"])
    assert unchecked <= CUSTOM_KINDS


def test_the_schema_check_catches_a_misspelt_field(base: Objects) -> None:
    reader = copy.deepcopy(_workload(base, "reader"))
    pod_spec(reader)["containers"][0]["readinesProbe"] = {"grpc": {"port": 50051}}
    with pytest.raises(kv_utils.ValidationError, match="readinesProbe"):
        kubernetes_validate.validate(reader, SCHEMA_VERSIONS[-1], strict=True)


def test_the_base_holds_every_quarry_workload(base: Objects) -> None:
    assert {d["metadata"]["name"] for d in of_kind(base, "Deployment")} == {
        "orchestrator",
        "research-worker",
        "reader",
        "ranker",
        "searxng",
    }
    index = named(base, "StatefulSet", "index")
    assert [t["metadata"]["name"] for t in index["spec"]["volumeClaimTemplates"]] == ["data"]
    mounts = {m["name"]: m["mountPath"] for m in _container(base, "index")["volumeMounts"]}
    env = {e["name"]: e.get("value") for e in _container(base, "index")["env"]}
    assert env["INDEX_DATA_DIR"].startswith(mounts["data"] + "/")
    hpas = {
        h["spec"]["scaleTargetRef"]["name"]: h for h in of_kind(base, "HorizontalPodAutoscaler")
    }
    assert set(hpas) == {"orchestrator", "reader", "ranker"}
    assert hpas["orchestrator"]["spec"]["metrics"][0]["resource"]["name"] == "cpu"


def test_the_orchestrator_balances_over_headless_services(base: Objects) -> None:
    """READER_ADDR etc. are dns:/// targets of headless Services on the services' ports: DNS
    answers one address per pod and the channel spreads calls round-robin
    (adapters/grpc/calls.py)."""
    config = named(base, "ConfigMap", "quarry-orchestrator")["data"]
    for service, port in GRPC_SERVICES.items():
        address = config[f"{service.upper()}_ADDR"]
        assert address == f"dns:///{service}-headless:{port}"
        headless = named(base, "Service", f"{service}-headless")
        assert headless["spec"]["clusterIP"] == "None"
        assert [p["port"] for p in headless["spec"]["ports"]] == [port]
    assert named(base, "StatefulSet", "index")["spec"]["serviceName"] == "index-headless"


def test_the_worker_is_the_orchestrator_image_with_the_worker_command(base: Objects) -> None:
    worker, api = _container(base, "research-worker"), _container(base, "orchestrator")
    assert worker["image"] == api["image"]
    assert worker["command"] == ["python", "-m", "orchestrator.worker"]
    assert "command" not in api
    assert worker["envFrom"] == api["envFrom"]
    assert not [
        s
        for s in of_kind(base, "Service")
        if s["spec"]["selector"].get("app.kubernetes.io/component") == "research-worker"
    ]


def test_the_worker_module_runs_with_python_m_once_issue_24_item_2_lands() -> None:
    """The worker's command, `python -m orchestrator.worker`, names a runnable module."""
    if importlib.util.find_spec("orchestrator") is None:
        pytest.skip("the orchestrator package is not installed")
    spec = importlib.util.find_spec("orchestrator.worker")
    if spec is None:
        pytest.skip("orchestrator.worker does not exist yet (issue 24, item 2)")
    if spec.submodule_search_locations is not None:  # a package runs its __main__
        assert importlib.util.find_spec("orchestrator.worker.__main__") is not None
    else:
        assert spec.origin is not None
        assert '__name__ == "__main__"' in Path(spec.origin).read_text()


def test_production_scales_the_workers_on_the_queue_depth(renders: dict[str, Objects]) -> None:
    objects = renders["overlays/production"]
    scaled = named(objects, "ScaledObject", "research-worker")["spec"]
    assert scaled["scaleTargetRef"]["name"] == "research-worker"
    (trigger,) = scaled["triggers"]
    assert trigger["type"] == "postgresql"
    assert trigger["name"] == "quarry-research-queue-depth"
    assert re.search(r"\bFROM research_runs\b", trigger["metadata"]["query"])
    # KEDA reads the connection from the worker's own environment: it must be there, from the
    # same Secret the worker uses.
    env = {e["name"]: e for e in _container(objects, "research-worker")["env"]}
    source = env[trigger["metadata"]["connectionFromEnv"]]["valueFrom"]["secretKeyRef"]
    assert source == {"name": "quarry-datastores", "key": "database-url"}
    assert "replicas" not in _workload(objects, "research-worker")["spec"]
    hpa_targets = [
        h["spec"]["scaleTargetRef"]["name"] for h in of_kind(objects, "HorizontalPodAutoscaler")
    ]
    assert "research-worker" not in hpa_targets  # KEDA makes its own


def _references(objects: Objects) -> set[tuple[str, str, str]]:
    """(kind, name, key) of every Secret/ConfigMap key a workload reads and requires."""
    refs = set()
    for workload in of_kind(objects, "Deployment", "StatefulSet"):
        for c in containers(workload):
            for e in c.get("env", []):
                for kind, field in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
                    ref = (e.get("valueFrom") or {}).get(field)
                    if ref and not ref.get("optional"):
                        refs.add((kind, ref["name"], ref["key"]))
            for source in c.get("envFrom", []):
                if "configMapRef" in source:
                    refs.add(("ConfigMap", source["configMapRef"]["name"], ""))
    return refs


def test_the_base_needs_only_the_documented_secrets(base: Objects) -> None:
    secrets = {(name, key) for kind, name, key in _references(base) if kind == "Secret"}
    assert secrets == {
        ("quarry-datastores", "database-url"),
        ("quarry-datastores", "redis-url"),
        ("quarry-api", "tokens"),
        ("quarry-searxng", "secret"),
    }
    guide = (ROOT / "docs" / "scaling.md").read_text()
    for name, key in secrets:
        assert name in guide, name
        assert key in guide, key


def test_the_quickstart_is_self_contained(renders: dict[str, Objects]) -> None:
    objects = renders["overlays/quickstart"]
    for kind, name, key in _references(objects):
        found = [o for o in of_kind(objects, kind) if o["metadata"]["name"] == name]
        assert found, f"{kind}/{name} is referenced but not rendered"
        assert not key or key in {**found[0].get("data", {})}, f"{kind}/{name}: no key {key}"
    for store, port in (("postgres", 5432), ("redis", 6379)):
        stateful = named(objects, "StatefulSet", store)
        assert stateful["spec"]["volumeClaimTemplates"]
        assert named(objects, "Service", store)["spec"]["ports"][0]["port"] == port
        for caller in CALLERS:
            assert allows(objects, caller, store, port)
        assert not allows(objects, "reader", store, port)


@pytest.mark.parametrize("overlay", RENDERS)
def test_only_the_callers_reach_the_services_and_nothing_else_does(
    renders: dict[str, Objects], overlay: str
) -> None:
    objects = renders[overlay]
    targets = {**GRPC_SERVICES, "searxng": 8080}
    for target, port in targets.items():
        for source in ("orchestrator", "research-worker", "reader", "ranker", "index", "searxng"):
            if source != target:
                assert allows(objects, source, target, port) == (source in CALLERS), (
                    source,
                    target,
                )
    assert not allows(objects, "reader", "orchestrator", 50051)


def test_only_the_reader_and_searxng_reach_the_internet_and_only_the_callers_the_llm(
    base: Objects,
) -> None:
    policies = {p["metadata"]["name"]: p["spec"] for p in of_kind(base, "NetworkPolicy")}
    internet = [
        spec
        for spec in policies.values()
        for rule in spec.get("egress", [])
        for peer in rule.get("to", [])
        if peer.get("ipBlock", {}).get("cidr") == "0.0.0.0/0"
    ]
    assert len(internet) == 1
    assert components_selected(base, internet[0]["podSelector"]) == INTERNET
    assert components_selected(base, policies["llm-egress"]["podSelector"]) == CALLERS


def _mem_bytes(value: str) -> int:
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "ki": 2**10, "mi": 2**20, "gi": 2**30}
    number, unit = re.fullmatch(r"(\d+)([a-zA-Z]*)", value).groups()  # type: ignore[union-attr]
    return int(number) * units.get(unit.lower(), 1)


@pytest.mark.parametrize("service", ["orchestrator", "reader", "ranker", "index", "searxng"])
def test_same_limits_ports_and_images_as_compose(base: Objects, service: str) -> None:
    compose = compose_policy.load()["services"][service]
    c = _container(base, service)
    assert _mem_bytes(c["resources"]["limits"]["memory"]) == _mem_bytes(compose["mem_limit"])
    ports = [str(p["containerPort"]) for p in c["ports"]]
    assert ports == compose.get("expose", ["8080"])
    if "image" in compose:
        assert c["image"] == compose["image"]
    else:  # built: our image, tagged with the service's package version
        package = tomllib.loads((ROOT / "services" / service / "pyproject.toml").read_text())
        assert c["image"] == f"quarry-{service}:{package['project']['version']}"


def test_searxng_gets_the_settings_compose_mounts() -> None:
    copied = (K8S / "base" / "searxng-settings.yml").read_text()
    assert copied == (ROOT / "searxng" / "settings.yml").read_text()


def test_system_packages_leave_kubectl_alone() -> None:
    assert "kubectl" not in (ROOT / "scripts" / "system-packages.sh").read_text()
