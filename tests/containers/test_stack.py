"""The four service images, run hardened on a podman network, answer one question end to end.

Run by ``make test-containers`` (scripts/test_containers.sh builds the images first); skipped
elsewhere. Each container gets the hardening flags of its compose.yaml service (read-only root,
cap_drop ALL, no-new-privileges, tmpfs, memory and pid limits, the compose health check), and
the orchestrator is published on 127.0.0.1 only. The compose volumes are mounted too: a podman
volume for the index's /data (local documents), a temporary folder with one Markdown note as the
orchestrator's read-only /corpus. SearXNG, the LLM and the web pages are stand-ins on the host.
Image sizes, cold start to healthy and idle memory go to build/test-containers.json.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.orchestrator.tests.fakes.fake_llm import Say
from tests.containers.local_docs import (
    ask_local,
    assert_note_indexed,
    corpus_folder,
    corpus_stats,
    wait_indexed,
)
from tests.containers.podman import (
    PODMAN,
    environment,
    hardening_flags,
    memory_mb,
    podman,
    volume_flags,
    wait_healthy,
)
from tests.containers.standins import PAGES, StandIns
from tests.e2e.otlp import Receiver, otlp_receiver
from tests.policy.compose_policy import COMPOSE_FILE, load, violations

pytestmark = pytest.mark.skipif(
    os.environ.get("QUARRY_CONTAINER_TEST") != "1" or shutil.which("podman") is None,
    reason="container tests run only under `make test-containers` (needs podman)",
)

ROOT = Path(__file__).resolve().parents[2]
TAG = os.environ.get("QUARRY_IMAGE_TAG", "test")
SERVICES = ("reader", "ranker", "index", "orchestrator")
REPORT = ROOT / "build" / "test-containers.json"
USER_UID = "10001"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Stack:
    """What the fixture started; the tests inspect it."""

    network: str
    gateway: str
    names: dict[str, str]
    port: int
    standins: StandIns
    traces: Receiver
    # compose's named volumes -> this run's podman volumes; the host env compose interpolates.
    volumes: dict[str, str]
    host_env: dict[str, str]
    cold_start_s: dict[str, float] = field(default_factory=dict)
    idle_memory_mb: dict[str, float] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The orchestrator's published address."""
        return f"http://127.0.0.1:{self.port}"


def _run(stack: Stack, service: str, compose_service: dict[str, Any], env: dict[str, str]) -> None:
    args = ["run", "-d", "--name", stack.names[service], "--network", stack.network]
    args += ["--network-alias", service, *hardening_flags(compose_service)]
    args += ["--log-opt", "max-size=10mb"]
    args += volume_flags(compose_service, stack.host_env, stack.volumes, ROOT)
    for key, value in env.items():
        args += ["--env", f"{key}={value}"]
    if service == "orchestrator":
        args += ["--publish", f"127.0.0.1:{stack.port}:8080"]
    podman(*args, f"localhost/quarry-{service}:{TAG}")


def _start_and_wait(stack: Stack, service: str, svc: dict[str, Any], env: dict[str, str]) -> None:
    started = time.monotonic()
    _run(stack, service, svc, env)
    stack.cold_start_s[service] = round(wait_healthy(stack.names[service], started), 2)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    compose = load()["services"]
    suffix = uuid.uuid4().hex[:6]
    network = f"quarry-ct-{suffix}"
    podman("network", "create", network)
    # One podman volume per named volume our services mount (compose makes <project>_<name>).
    mounted = {str(m).split(":", 1)[0] for s in SERVICES for m in compose[s].get("volumes") or []}
    volumes = {v: f"quarry-ct-{v}-{suffix}" for v in load().get("volumes") or {} if v in mounted}
    for volume in volumes.values():
        podman("volume", "create", volume)
    host_env = {"CORPUS_DIR": str(corpus_folder(tmp_path_factory.mktemp("stack")))}
    gateway = podman(
        "network", "inspect", network, "--format", "{{range .Subnets}}{{.Gateway}}{{end}}"
    ).strip()
    names = {s: f"quarry-ct-{s}-{suffix}" for s in SERVICES}
    cleanup = contextlib.ExitStack()
    traces = cleanup.enter_context(otlp_receiver())
    # Relay ports are fixed up front: the services get the OTLP endpoint when they start, before
    # the gateway address exists on the host and the relays can bind.
    relay_ports = {name: _free_port() for name in ("searxng", "llm", "pages", "otlp")}
    otlp_port = int(traces.endpoint.rsplit(":", 1)[1])
    standins = StandIns(gateway, relay_ports, extra={"otlp": otlp_port})
    stack = Stack(network, gateway, names, _free_port(), standins, traces, volumes, host_env)
    base_env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{gateway}:{relay_ports['otlp']}"}
    # Export spans within 0.2 s instead of the SDK's 5 s batch delay.
    fast_export = {"OTEL_BSP_SCHEDULE_DELAY": "200"}
    try:
        reader_env = environment(compose["reader"], base_env) | fast_export
        # The stand-in pages live on the podman gateway, a private address the reader's SSRF
        # policy refuses unless allowed.
        reader_env["READER_ALLOWED_CIDRS"] = f"{gateway}/32"
        with ThreadPoolExecutor(3) as pool:  # compose starts them at once, too
            waits = [
                pool.submit(_start_and_wait, stack, "reader", compose["reader"], reader_env),
                *(
                    pool.submit(
                        _start_and_wait,
                        stack,
                        name,
                        compose[name],
                        environment(compose[name], base_env) | fast_export,
                    )
                    for name in ("ranker", "index")
                ),
            ]
            for w in waits:
                w.result()
        stack.standins.start()  # binds the gateway address, which exists once a container runs
        orch_env = environment(compose["orchestrator"], base_env) | fast_export
        orch_env |= {
            "SEARXNG_URL": stack.standins.url("searxng"),
            "LLM_BASE_URL": stack.standins.url("llm"),
            "LLM_MODEL": "fake-model",
        }
        _start_and_wait(stack, "orchestrator", compose["orchestrator"], orch_env)
        time.sleep(3)  # let start-up work settle before sampling idle memory
        stack.idle_memory_mb = {s: memory_mb(names[s]) for s in SERVICES}
        yield stack
    finally:
        for name in names.values():
            if os.environ.get("QUARRY_KEEP_LOGS"):
                print(podman("logs", "--tail", "30", name, check=False))  # noqa: T201
            podman("rm", "-f", "-t", "5", name, check=False)
        podman("network", "rm", "-f", network, check=False)
        for volume in volumes.values():
            podman("volume", "rm", "-f", volume, check=False)
        stack.standins.stop()
        cleanup.close()


def test_compose_passes_the_policy() -> None:
    assert violations(load()) == []


def test_compose_cli_accepts_the_file() -> None:
    """With the real Docker Compose binary (fetched by the script), `config` validates it."""
    binary = os.environ.get("COMPOSE_BIN")
    if not binary:
        pytest.skip("COMPOSE_BIN not set")
    env = {k: v for k, v in os.environ.items() if k != "SEARXNG_SECRET"}
    cmd = [binary, "-f", str(COMPOSE_FILE), "--profile", "tracing", "config", "--quiet"]
    missing = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert missing.returncode != 0
    assert "SEARXNG_SECRET" in missing.stderr
    ok = subprocess.run(
        cmd, env=env | {"SEARXNG_SECRET": "x" * 32}, capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0, ok.stderr


def test_every_service_became_healthy(stack: Stack) -> None:
    assert set(stack.cold_start_s) == set(SERVICES)
    for service in SERVICES:
        status = podman("inspect", "--format", "{{.State.Status}}", stack.names[service])
        assert status.strip() == "running"


@pytest.mark.parametrize("service", SERVICES)
def test_runs_hardened(stack: Stack, service: str) -> None:
    name = stack.names[service]
    info = json.loads(podman("inspect", name))[0]
    host = info["HostConfig"]
    compose_service = load()["services"][service]
    assert host["ReadonlyRootfs"] is True
    assert info["Config"]["User"] in ("", USER_UID, f"{USER_UID}:{USER_UID}")
    assert host["PidsLimit"] == compose_service["pids_limit"]
    assert host["Memory"] > 0
    # Measured from inside: uid, effective capabilities, no_new_privs, read-only root.
    probe = (
        "import os, pathlib\n"
        "status = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines()"
        " if ':\\t' in l)\n"
        "print(os.getuid(), int(status['CapEff'], 16), status['NoNewPrivs'].strip())\n"
        "for p in ('/app/x', '/x'):\n"
        "    try:\n"
        "        pathlib.Path(p).write_text('x')\n"
        "        print('writable', p)\n"
        "    except OSError as e:\n"
        "        print('denied', e.errno)\n"
    )
    out = podman("exec", name, "python", "-c", probe).split("\n")
    assert out[0] == f"{USER_UID} 0 1"
    assert out[1].startswith("denied")
    assert out[2].startswith("denied")
    # No compiler and no uv at run time (the official base image keeps its own pip).
    tools = podman("exec", name, "sh", "-c", "command -v gcc cc c++ make uv || true").strip()
    assert tools == ""


def test_only_the_orchestrator_is_published_on_loopback(stack: Stack) -> None:
    for service in SERVICES:
        bindings = json.loads(podman("inspect", stack.names[service]))[0]["HostConfig"].get(
            "PortBindings"
        )
        # Exposed-only ports show up with no binding (None); published ones carry a host side.
        published = {port: hosts for port, hosts in (bindings or {}).items() if hosts}
        if service == "orchestrator":
            assert published == {"8080/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(stack.port)}]}
        else:
            assert published == {}


def test_one_question_through_the_published_port(stack: Stack) -> None:
    # The judge finds the snippets only partly sufficient, so the run reads the pages.
    stack.standins.llm.queue("judge", Say.json({"reasoning": "r", "sufficiency": "partial"}))
    reply = httpx.post(
        f"http://127.0.0.1:{stack.port}/v1/search",
        json={"query": "why are some tides higher than others?"},
        headers={"Accept": "application/json"},
        timeout=120,
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    text = json.dumps(body)
    # The question went through SearXNG and the LLM stand-ins, and the reader (in its container)
    # fetched the pages from the host.
    assert stack.standins.searxng.queries
    assert stack.standins.llm.calls
    # Reads may be prefetched and still in flight when the answer is out: give them a moment.
    deadline = time.monotonic() + 10
    while not set(stack.standins.page_requests) & set(PAGES) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(stack.standins.page_requests) & set(PAGES), text
    assert body["stats"]["pages_read"] >= 1, text
    assert "[1]" in text or "[2]" in text
    assert any(path in text for path in PAGES)


def test_the_question_is_one_trace_across_the_containers(stack: Stack) -> None:
    """Spans leave every container over OTLP, and the orchestrator's trace reaches both."""
    deadline = time.monotonic() + 15
    while True:
        by_trace: dict[str, set[str]] = {}
        for span in stack.traces.snapshot():
            by_trace.setdefault(span.trace_id, set()).add(span.service)
        if any(services >= set(SERVICES) for services in by_trace.values()):
            break
        assert time.monotonic() < deadline, by_trace
        time.sleep(0.2)


def test_the_mounted_corpus_is_indexed_into_the_index_volume(stack: Stack) -> None:
    """The orchestrator indexed its read-only /corpus at start; the index committed to /data."""
    assert_note_indexed(wait_indexed(stack.url))
    # The commit landed on the volume, owned by the service user, not in the container's tmpfs.
    listing = podman("exec", stack.names["index"], "find", "/data", "-user", USER_UID)
    assert "/data/index/corpus/" in listing, listing
    # /corpus is read-only inside the orchestrator.
    probe = "open('/corpus/x', 'w')"
    denied = subprocess.run(
        [PODMAN, "exec", stack.names["orchestrator"], "python", "-c", probe],
        capture_output=True,
        text=True,
        check=False,
    )
    assert denied.returncode != 0
    assert "Read-only file system" in denied.stderr, denied.stderr


def test_a_local_question_cites_the_mounted_document(stack: Stack) -> None:
    wait_indexed(stack.url)
    searches = len(stack.standins.searxng.queries)
    ask_local(stack.url)
    assert len(stack.standins.searxng.queries) == searches  # local only: SearXNG not asked


def test_report_numbers(stack: Stack) -> None:
    sizes = {
        s: int(podman("image", "inspect", "--format", "{{.Size}}", f"localhost/quarry-{s}:{TAG}"))
        for s in SERVICES
    }
    report = json.loads(REPORT.read_text()) if REPORT.exists() else {}
    report |= {
        "image_size_mb": {s: round(v / 1e6, 1) for s, v in sizes.items()},
        "cold_start_to_healthy_s": stack.cold_start_s,
        "idle_memory_mb": stack.idle_memory_mb,
        "after_question_memory_mb": {s: memory_mb(stack.names[s]) for s in SERVICES},
    }
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2) + "\n")
    assert all(v > 0 for v in report["idle_memory_mb"].values())


def test_the_index_survives_an_index_restart(stack: Stack) -> None:
    """Last (it restarts a container): the index loads its committed data from the volume."""
    wait_indexed(stack.url)
    name = stack.names["index"]
    podman("restart", "-t", "5", name)
    wait_healthy(name, time.monotonic())
    # Nothing re-indexes (no rescan): the count comes from what the index loaded at start.
    stats = corpus_stats(stack.url)
    assert stats["documents"] == 1, stats
    assert not stats["refreshing"], stats
