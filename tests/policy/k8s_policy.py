"""The Kubernetes policy for deploy/k8s as pure functions over rendered objects.

``render(overlay)`` runs ``kubectl kustomize`` (offline); ``violations(objects)`` lists every
hardening, availability and network rule a render breaks (empty when it passes). Used by
tests/policy/test_k8s.py, which also breaks renders on purpose to prove each rule fires.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
#: Every kustomization a user applies (base alone, and each overlay).
RENDERS = ("base", "overlays/production", "overlays/quickstart")
NAMESPACE = "quarry"
WORKLOADS = ("Deployment", "StatefulSet")
COMPONENT = "app.kubernetes.io/component"
#: Who may call the services, reach the LLM and hold datastore credentials.
CALLERS = frozenset({"orchestrator", "research-worker"})
#: The only pods with a route to the internet: the reader fetches pages, SearXNG asks engines.
INTERNET = frozenset({"reader", "searxng"})
GRPC_SERVICES = {"reader": 50051, "ranker": 50052, "index": 50053}
#: Address ranges an internet egress rule must leave closed (cluster, node and metadata ranges).
PRIVATE = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8")
PINNED_IMAGE = re.compile(r"^[\w.\-/:]+@sha256:[0-9a-f]{64}$")
QUARRY_IMAGE = re.compile(r"^quarry-(?P<service>[a-z]+):(?P<tag>[\w.\-]+)$")
#: A mount path inside the pods (the only writable place besides the data volumes).
TMP = "/tmp"  # noqa: S108


def kubectl() -> str | None:
    """The kubectl on PATH, or None (the tests skip; scripts/system-packages.sh installs none)."""
    return shutil.which("kubectl")


def render(overlay: str) -> list[dict[str, Any]]:
    """``kubectl kustomize deploy/k8s/<overlay>``, parsed (no cluster is contacted)."""
    binary = kubectl()
    if binary is None:
        raise FileNotFoundError("kubectl is not installed")
    out = subprocess.run(
        [binary, "kustomize", str(K8S / overlay)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def of_kind(objects: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] in kinds]


def named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    """The one object of ``kind`` whose name is ``name`` or ``name-<hash>`` (generated ones)."""
    found = [
        o
        for o in of_kind(objects, kind)
        if re.fullmatch(rf"{re.escape(name)}(-[a-z0-9]{{10}})?", o["metadata"]["name"])
    ]
    if len(found) != 1:
        raise KeyError(f"{kind}/{name}: {len(found)} found")
    return found[0]


def pod_spec(workload: Mapping[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def pod_labels(workload: Mapping[str, Any]) -> dict[str, str]:
    labels: dict[str, str] = workload["spec"]["template"]["metadata"].get("labels", {})
    return labels


def containers(workload: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    spec = pod_spec(workload)
    yield from spec.get("initContainers", [])
    yield from spec["containers"]


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A Kubernetes label selector's verdict on ``labels`` (an empty selector selects all)."""
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True


def components_selected(objects: list[dict[str, Any]], selector: Mapping[str, Any]) -> set[str]:
    """The workload components (their ``app.kubernetes.io/component``) a pod selector picks."""
    return {
        pod_labels(w).get(COMPONENT, w["metadata"]["name"])
        for w in of_kind(objects, *WORKLOADS)
        if selects(selector, pod_labels(w))
    }


def violations(objects: list[dict[str, Any]]) -> list[str]:
    """Every policy violation in one render; empty when it passes."""
    problems: list[str] = []
    problems += _namespace_rules(objects)
    for workload in of_kind(objects, *WORKLOADS):
        problems += workload_violations(workload)
    problems += _availability_rules(objects)
    problems += _network_rules(objects)
    return problems


def _namespace_rules(objects: list[dict[str, Any]]) -> list[str]:
    problems = []
    labels = named(objects, "Namespace", NAMESPACE)["metadata"].get("labels", {})
    if labels.get("pod-security.kubernetes.io/enforce") != "restricted":
        problems.append("namespace: must enforce the restricted Pod Security Standard")
    for obj in objects:
        meta, name = obj["metadata"], f"{obj['kind']}/{obj['metadata']['name']}"
        if obj["kind"] != "Namespace" and meta.get("namespace") != NAMESPACE:
            problems.append(f"{name}: not in namespace {NAMESPACE}")
        if meta.get("labels", {}).get("app.kubernetes.io/part-of") != "quarry":
            problems.append(f"{name}: missing label app.kubernetes.io/part-of=quarry")
    for account in of_kind(objects, "ServiceAccount"):
        if account.get("automountServiceAccountToken") is not False:
            problems.append(f"ServiceAccount/{account['metadata']['name']}: must not automount")
    return problems


def workload_violations(workload: Mapping[str, Any]) -> list[str]:
    """Hardening problems of one Deployment or StatefulSet."""
    name = workload["metadata"]["name"]
    spec = pod_spec(workload)
    problems = []
    if spec.get("automountServiceAccountToken") is not False:
        problems.append(f"{name}: automountServiceAccountToken must be false")
    if spec.get("enableServiceLinks") is not False:
        problems.append(f"{name}: enableServiceLinks must be false")
    if any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC")):
        problems.append(f"{name}: must not share the host's namespaces")
    if any("hostPath" in v for v in spec.get("volumes", [])):
        problems.append(f"{name}: hostPath volumes are not allowed")
    pod_sc = spec.get("securityContext") or {}
    if pod_sc.get("runAsNonRoot") is not True or pod_sc.get("runAsUser", 0) == 0:
        problems.append(f"{name}: pod must run as a non-root uid (runAsNonRoot, runAsUser)")
    if (pod_sc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        problems.append(f"{name}: pod seccompProfile must be RuntimeDefault")
    tmp_volumes = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
    for container in containers(workload):
        problems += _container_violations(name, container, tmp_volumes)
    return problems


def _container_violations(workload: str, c: Mapping[str, Any], tmp_volumes: set[str]) -> list[str]:
    name = f"{workload}/{c['name']}"
    problems = []
    sc = c.get("securityContext") or {}
    if sc.get("allowPrivilegeEscalation") is not False:
        problems.append(f"{name}: allowPrivilegeEscalation must be false")
    if sc.get("readOnlyRootFilesystem") is not True:
        problems.append(f"{name}: readOnlyRootFilesystem must be true")
    if "ALL" not in (sc.get("capabilities") or {}).get("drop", []):
        problems.append(f"{name}: capabilities must drop ALL")
    if (sc.get("capabilities") or {}).get("add"):
        problems.append(f"{name}: capabilities.add is not allowed")
    if sc.get("privileged") or sc.get("runAsUser") == 0:
        problems.append(f"{name}: must not run privileged or as root")
    if not any(
        m["mountPath"] == TMP and m["name"] in tmp_volumes for m in c.get("volumeMounts", [])
    ):
        problems.append(f"{name}: /tmp must be an emptyDir (the root filesystem is read-only)")
    for probe in ("livenessProbe", "readinessProbe"):
        if probe not in c:
            problems.append(f"{name}: {probe} missing")
    resources = c.get("resources") or {}
    for part in ("requests", "limits"):
        for resource in ("cpu", "memory"):
            if resource not in (resources.get(part) or {}):
                problems.append(f"{name}: resources.{part}.{resource} missing")
    image = str(c.get("image", ""))
    quarry = QUARRY_IMAGE.match(image)
    if quarry is None and not PINNED_IMAGE.match(image):
        problems.append(f"{name}: image {image!r} is neither quarry-*:<version> nor @sha256 pinned")
    if image.endswith(":latest") or (quarry and quarry.group("tag") == "latest"):
        problems.append(f"{name}: image {image!r} uses :latest")
    return problems + _probe_violations(name, workload, c)


def _probe_violations(name: str, workload: str, c: Mapping[str, Any]) -> list[str]:
    """The probes ask the service's own health endpoint, as compose's health checks do."""
    problems = []
    if workload in GRPC_SERVICES:
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            port = (c.get(probe) or {}).get("grpc", {}).get("port")
            want = GRPC_SERVICES[workload]
            if port != want:
                problems.append(f"{name}: {probe} must ask gRPC health on {want}")
    if workload in CALLERS:
        for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
            get = (c.get(probe) or {}).get("httpGet") or {}
            if get.get("path") != path:
                problems.append(f"{name}: {probe} must GET {path}")
            headers = {h["name"].lower(): h["value"] for h in get.get("httpHeaders", [])}
            if headers.get("host") != "localhost":
                problems.append(f"{name}: {probe} must send Host: localhost (the host guard)")
    return problems


def _availability_rules(objects: list[dict[str, Any]]) -> list[str]:
    """Every workload has a PDB that lets a drain proceed; autoscaled ones carry no replicas."""
    problems = []
    budgets = of_kind(objects, "PodDisruptionBudget")
    scaled = {
        o["spec"]["scaleTargetRef"]["name"]: o
        for o in of_kind(objects, "HorizontalPodAutoscaler", "ScaledObject")
    }
    for workload in of_kind(objects, *WORKLOADS):
        name = workload["metadata"]["name"]
        mine = [b for b in budgets if selects(b["spec"]["selector"], pod_labels(workload))]
        if len(mine) != 1:
            problems.append(f"{name}: needs exactly one PodDisruptionBudget ({len(mine)} found)")
        scaler = scaled.get(name)
        if scaler is not None and "replicas" in workload["spec"]:
            problems.append(f"{name}: autoscaled, so spec.replicas must be left out")
        fewest = _fewest_replicas(workload, scaler)
        for budget in mine:
            least = budget["spec"].get("minAvailable")
            if isinstance(least, int) and least >= fewest:
                problems.append(f"{name}: minAvailable {least} of {fewest} replicas blocks drains")
            if budget["spec"].get("maxUnavailable") == 0:
                problems.append(f"{name}: maxUnavailable 0 blocks drains")
    return problems


def _fewest_replicas(workload: Mapping[str, Any], scaler: Mapping[str, Any] | None) -> int:
    if scaler is None:
        return int(workload["spec"].get("replicas", 1))
    spec = scaler["spec"]
    return int(spec.get("minReplicas", spec.get("minReplicaCount", 1)))


def _network_rules(objects: list[dict[str, Any]]) -> list[str]:
    problems = []
    policies = of_kind(objects, "NetworkPolicy")
    if not any(
        p["spec"].get("podSelector") == {}
        and set(p["spec"].get("policyTypes", [])) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
        for p in policies
    ):
        problems.append("network: a default-deny policy (all pods, Ingress and Egress) is missing")
    for policy in policies:
        problems += _policy_violations(objects, policy)
    return problems


def _policy_violations(objects: list[dict[str, Any]], policy: Mapping[str, Any]) -> list[str]:
    name = f"NetworkPolicy/{policy['metadata']['name']}"
    spec = policy["spec"]
    picked = components_selected(objects, spec.get("podSelector") or {})
    problems = []
    for rule in spec.get("egress", []):
        peers = rule.get("to")
        if not peers:
            # Any destination: only the callers, only on named ports (external datastores).
            if not rule.get("ports") or not picked <= CALLERS:
                problems.append(f"{name}: egress to anywhere must be port-bound and callers-only")
            continue
        for peer in peers:
            block = peer.get("ipBlock")
            if block and block["cidr"] in ("0.0.0.0/0", "::/0"):
                if not picked <= INTERNET:
                    problems.append(f"{name}: internet egress for {sorted(picked - INTERNET)}")
                closed = set(block.get("except", []))
                if block["cidr"] == "0.0.0.0/0" and not set(PRIVATE) <= closed:
                    problems.append(f"{name}: internet egress must except {PRIVATE}")
            elif "namespaceSelector" in peer and not _is_dns(peer) and not picked <= CALLERS:
                problems.append(f"{name}: only the callers may reach another namespace (the LLM)")
    for rule in spec.get("ingress", []):
        guarded = picked & (set(GRPC_SERVICES) | {"searxng", "postgres", "redis"})
        peers = rule.get("from") or []
        # KEDA's operator polls the queue depth (components/keda): Postgres's one extra caller.
        if picked == {"postgres"} and peers and all(_is_keda(p) for p in peers):
            continue
        if guarded and not _callers_only(objects, peers):
            problems.append(f"{name}: {sorted(guarded)} must accept the callers only")
    return problems


def _is_keda(peer: Mapping[str, Any]) -> bool:
    namespace = (peer.get("namespaceSelector") or {}).get("matchLabels") or {}
    return namespace == {"kubernetes.io/metadata.name": "keda"} and "podSelector" in peer


def _is_dns(peer: Mapping[str, Any]) -> bool:
    return (peer.get("podSelector") or {}).get("matchLabels") == {"k8s-app": "kube-dns"}


def _callers_only(objects: list[dict[str, Any]], peers: list[dict[str, Any]] | None) -> bool:
    """True when every peer is a pod selector in this namespace that picks callers only."""
    if not peers:
        return False
    return all(
        set(peer) == {"podSelector"}
        and components_selected(objects, peer["podSelector"]) <= CALLERS
        for peer in peers
    )


def _peer_matches(peer: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a policy peer names a pod of this namespace with ``labels`` (ipBlocks name
    addresses outside the cluster here: pod addresses lie in the ranges they except)."""
    if "ipBlock" in peer:
        return False
    namespace = {"kubernetes.io/metadata.name": NAMESPACE}
    if "namespaceSelector" in peer and not selects(peer["namespaceSelector"], namespace):
        return False
    return selects(peer.get("podSelector"), labels)


def _direction_allows(
    objects: list[dict[str, Any]],
    kind: str,
    me: Mapping[str, str],
    other: Mapping[str, str],
    port: int,
) -> bool:
    key, peers_key = ("egress", "to") if kind == "Egress" else ("ingress", "from")
    mine = [
        p["spec"]
        for p in of_kind(objects, "NetworkPolicy")
        if kind in p["spec"].get("policyTypes", []) and selects(p["spec"]["podSelector"], me)
    ]
    if not mine:
        return True  # no policy isolates this pod in this direction
    for spec in mine:
        for rule in spec.get(key, []):
            ports = [p.get("port") for p in rule.get("ports", [])]
            peers = rule.get(peers_key)
            if (not ports or port in ports) and (
                not peers or any(_peer_matches(peer, other) for peer in peers)
            ):
                return True
    return False


def allows(objects: list[dict[str, Any]], source: str, target: str, port: int) -> bool:
    """Whether the NetworkPolicies let a ``source`` pod open TCP ``port`` on a ``target`` pod."""
    pods = {pod_labels(w).get(COMPONENT): pod_labels(w) for w in of_kind(objects, *WORKLOADS)}
    src, dst = pods[source], pods[target]
    return _direction_allows(objects, "Egress", src, dst, port) and _direction_allows(
        objects, "Ingress", dst, src, port
    )
