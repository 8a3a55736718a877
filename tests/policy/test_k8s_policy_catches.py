"""The Kubernetes policy (k8s_policy.py) fires: each rule on a base render broken on purpose."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.policy.k8s_policy import kubectl, named, of_kind, pod_spec, render, violations

Objects = list[dict[str, Any]]

pytestmark = pytest.mark.skipif(
    kubectl() is None, reason="kubectl is not installed (see tests/policy/test_k8s.py)"
)


@pytest.fixture(scope="module")
def base() -> Objects:
    return render("base")


def _workload(objects: Objects, name: str) -> dict[str, Any]:
    (found,) = [
        w for w in of_kind(objects, "Deployment", "StatefulSet") if w["metadata"]["name"] == name
    ]
    return found


def _container(objects: Objects, name: str) -> dict[str, Any]:
    container: dict[str, Any] = pod_spec(_workload(objects, name))["containers"][0]
    return container


Mutation = Callable[[Objects], None]


def _on_container(name: str, change: Callable[[dict[str, Any]], None]) -> Mutation:
    return lambda objects: change(_container(objects, name))


def _on_pod(name: str, change: Callable[[dict[str, Any]], None]) -> Mutation:
    return lambda objects: change(pod_spec(_workload(objects, name)))


def _drop_policy(name: str) -> Mutation:
    def drop(objects: Objects) -> None:
        objects.remove(named(objects, "NetworkPolicy", name))

    return drop


def _open_to_all(name: str) -> Mutation:
    return lambda objects: named(objects, "NetworkPolicy", name)["spec"].update(podSelector={})


@pytest.mark.parametrize(
    ("mutation", "expected"),
    [
        (
            _on_container("reader", lambda c: c["securityContext"].pop("readOnlyRootFilesystem")),
            "reader/reader: readOnlyRootFilesystem must be true",
        ),
        (
            _on_container("ranker", lambda c: c["securityContext"]["capabilities"].update(drop=[])),
            "ranker/ranker: capabilities must drop ALL",
        ),
        (
            _on_container(
                "index", lambda c: c["securityContext"].update(allowPrivilegeEscalation=True)
            ),
            "index/index: allowPrivilegeEscalation must be false",
        ),
        (
            _on_container("orchestrator", lambda c: c.pop("readinessProbe")),
            "orchestrator/orchestrator: readinessProbe missing",
        ),
        (
            _on_container("reader", lambda c: c["livenessProbe"].update(grpc={"port": 1})),
            "reader/reader: livenessProbe must ask gRPC health on 50051",
        ),
        (
            _on_container(
                "orchestrator", lambda c: c["readinessProbe"]["httpGet"].pop("httpHeaders")
            ),
            "orchestrator/orchestrator: readinessProbe must send Host: localhost",
        ),
        (
            _on_container("ranker", lambda c: c["resources"].pop("limits")),
            "ranker/ranker: resources.limits.memory missing",
        ),
        (
            _on_container("searxng", lambda c: c.update(image="docker.io/searxng/searxng:latest")),
            "searxng/searxng: image 'docker.io/searxng/searxng:latest' is neither",
        ),
        (_on_container("reader", lambda c: c.update(image="quarry-reader:latest")), "uses :latest"),
        (
            _on_container("reader", lambda c: c.update(volumeMounts=[])),
            "reader/reader: /tmp must be an emptyDir",
        ),
        (
            _on_pod("research-worker", lambda s: s.update(automountServiceAccountToken=True)),
            "research-worker: automountServiceAccountToken must be false",
        ),
        (
            _on_pod("reader", lambda s: s.pop("enableServiceLinks")),
            "reader: enableServiceLinks must be false",
        ),
        (
            _on_pod("index", lambda s: s["securityContext"].pop("seccompProfile")),
            "index: pod seccompProfile must be RuntimeDefault",
        ),
        (
            _on_pod("searxng", lambda s: s["securityContext"].update(runAsUser=0)),
            "searxng: pod must run as a non-root uid",
        ),
        (
            _on_pod("ranker", lambda s: s.update(hostNetwork=True)),
            "ranker: must not share the host's namespaces",
        ),
        (
            lambda o: named(o, "PodDisruptionBudget", "reader")["spec"].update(minAvailable=2),
            "reader: minAvailable 2 of 2 replicas blocks drains",
        ),
        (
            lambda o: o.remove(named(o, "PodDisruptionBudget", "ranker")),
            "ranker: needs exactly one PodDisruptionBudget (0 found)",
        ),
        (
            lambda o: _workload(o, "orchestrator")["spec"].update(replicas=3),
            "orchestrator: autoscaled, so spec.replicas must be left out",
        ),
        (_drop_policy("default-deny"), "network: a default-deny policy"),
        (_open_to_all("internet-egress"), "NetworkPolicy/internet-egress: internet egress for"),
        (_open_to_all("llm-egress"), "NetworkPolicy/llm-egress: only the callers may reach"),
        (_open_to_all("datastores-egress"), "egress to anywhere must be port-bound"),
        (
            lambda o: named(o, "NetworkPolicy", "reader-ingress")["spec"]["ingress"][0].pop("from"),
            "NetworkPolicy/reader-ingress: ['reader'] must accept the callers only",
        ),
        (
            lambda o: named(o, "Namespace", "quarry")["metadata"]["labels"].clear(),
            "namespace: must enforce the restricted Pod Security Standard",
        ),
        (
            lambda o: named(o, "ServiceAccount", "quarry").pop("automountServiceAccountToken"),
            "ServiceAccount/quarry: must not automount",
        ),
        (
            lambda o: named(o, "Service", "searxng")["metadata"].pop("namespace"),
            "Service/searxng: not in namespace quarry",
        ),
    ],
)
def test_policy_catches(base: Objects, mutation: Mutation, expected: str) -> None:
    broken = copy.deepcopy(base)
    mutation(broken)
    found = violations(broken)
    assert any(expected in problem for problem in found), found


def test_an_internet_rule_without_the_private_ranges_is_caught(base: Objects) -> None:
    broken = copy.deepcopy(base)
    peer = named(broken, "NetworkPolicy", "internet-egress")["spec"]["egress"][0]["to"][0]
    peer["ipBlock"]["except"].remove("169.254.0.0/16")
    assert any("internet egress must except" in p for p in violations(broken))
