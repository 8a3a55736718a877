"""compose.yaml itself, run by the real Docker Compose v2 against Podman's Docker API.

SearXNG and Ollama cannot be pulled here, so tests/containers/compose.standins.yaml swaps them
for forwarders to the host fakes; everything else is compose.yaml as written: service names and
URLs, depends_on conditions (service_healthy, ollama-pull's service_completed_successfully), the
internal backend network, hardening keys and the 127.0.0.1 port. Podman runs health checks only
from systemd timers, which this machine lacks, so a pump runs ``podman healthcheck run`` every
second, as an engine would. Needs COMPOSE_BIN (fetched by scripts/test_containers.sh).
"""

from __future__ import annotations

import json
import os
import random
import secrets
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from services.orchestrator.tests.fakes.fake_llm import Say
from tests.containers.local_docs import ask_local, assert_note_indexed, corpus_folder, wait_indexed
from tests.containers.podman import PODMAN, memory_mb, podman
from tests.containers.standins import PAGES, StandIns

ROOT = Path(__file__).resolve().parents[2]
OVERRIDE = Path(__file__).with_name("compose.standins.yaml")
COMPOSE_BIN = os.environ.get("COMPOSE_BIN", "")

pytestmark = pytest.mark.skipif(
    os.environ.get("QUARRY_CONTAINER_TEST") != "1" or not COMPOSE_BIN,
    reason="runs only under `make test-containers`, with podman and the compose binary",
)


def _compose_cmd(project: str) -> list[str]:
    # --env-file /dev/null: a developer's .env must not leak into the test.
    files = ["-f", "compose.yaml", "-f", str(OVERRIDE)]
    return [COMPOSE_BIN, "--env-file", os.devnull, "-p", project, *files]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _address_is_up(ip: str) -> bool:
    with socket.socket() as s:
        try:
            s.bind((ip, 0))
        except OSError:
            return False
        return True


@dataclass
class ComposeStack:
    """A running compose project and what the tests need to reach it."""

    project: str
    env: dict[str, str]
    port: int
    standins: StandIns
    up_s: float

    def compose(
        self, *args: str, timeout: float = 300, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        cmd = [*_compose_cmd(self.project), *args]
        env = self.env | (env or {})
        return subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )

    def container(self, service: str) -> str:
        return f"{self.project}-{service}-1"


class HealthPump:
    """Run every project container's health check once a second (Podman has no timer here)."""

    def __init__(self, project: str) -> None:
        self.project = project
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HealthPump:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        label = f"label=com.docker.compose.project={self.project}"
        with ThreadPoolExecutor(8) as pool:  # one slow check must not delay the others
            while not self._stop.wait(1.0):
                names = podman("ps", "--filter", label, "--format", "{{.Names}}", check=False)
                list(pool.map(self._check, names.split()))

    @staticmethod
    def _check(name: str) -> None:
        subprocess.run(
            [PODMAN, "healthcheck", "run", name], capture_output=True, timeout=30, check=False
        )


@pytest.fixture(scope="module")
def podman_socket(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    sock = tmp_path_factory.mktemp("podman") / "podman.sock"
    service = subprocess.Popen(
        [PODMAN, "system", "service", "--time=0", f"unix://{sock}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        yield f"unix://{sock}"
    finally:
        service.terminate()
        service.wait(15)


@pytest.fixture(scope="module")
def stack(podman_socket: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ComposeStack]:
    project = f"quarry-cc-{uuid.uuid4().hex[:6]}"
    net = f"10.{random.randint(160, 250)}.{random.randint(0, 255)}"
    gateway = f"{net}.1"
    relay_ports = {"searxng": _free_port(), "llm": _free_port(), "pages": _free_port()}
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "LLM_"))},
        "DOCKER_HOST": podman_socket,
        "SEARXNG_SECRET": secrets.token_hex(32),
        "QUARRY_PORT": str(port),
        "LLM_MODEL": "fake-model",
        # compose.yaml bind-mounts ${CORPUS_DIR:-./corpus} read-only at /corpus.
        "CORPUS_DIR": str(corpus_folder(tmp_path_factory.mktemp("compose"))),
        "STANDIN_IMAGE": os.environ.get(
            "QUARRY_STANDIN_IMAGE", "localhost/quarry-python:3.11-bookworm"
        ),
        "STANDIN_HOST": gateway,
        "STANDIN_SUBNET": f"{net}.0/24",
        "SEARXNG_RELAY_PORT": str(relay_ports["searxng"]),
        "LLM_RELAY_PORT": str(relay_ports["llm"]),
    }
    standins = StandIns(gateway, relay_ports)
    stack = ComposeStack(project, env, port, standins, 0.0)
    with HealthPump(project):
        started = time.monotonic()
        cmd = _compose_cmd(project)
        up = subprocess.Popen(
            [*cmd, "up", "-d", "--no-build", "--wait", "--wait-timeout", "240"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            # The egress bridge (and so the gateway address) exists once its first container runs.
            deadline = time.monotonic() + 120
            while not _address_is_up(gateway):
                assert up.poll() is None or up.returncode == 0, up.stdout and up.stdout.read()
                assert time.monotonic() < deadline, "the egress network never came up"
                time.sleep(0.2)
            standins.start()
            out, _ = up.communicate(timeout=300)
            if os.environ.get("QUARRY_KEEP_LOGS"):
                print(out)  # noqa: T201
            assert up.returncode == 0, out + _diagnose(project)
            # `up --wait` (as `make up` runs it) returned: every service is healthy, and the
            # one-shot ollama-pull, adopted through service_completed_successfully, exited 0.
            assert _health(stack.container("orchestrator")) == "healthy"
            stack.up_s = round(time.monotonic() - started, 1)
            yield stack
        finally:
            if up.poll() is None:
                up.kill()
            down = stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "5")
            if down.returncode != 0:
                print(down.stdout, down.stderr)  # noqa: T201
            standins.stop()


def _diagnose(project: str) -> str:
    label = f"label=com.docker.compose.project={project}"
    lines = []
    for name in podman("ps", "-a", "--filter", label, "--format", "{{.Names}}").split():
        health = podman("inspect", "--format", "{{json .State.Health}}", name, check=False)
        logs = podman("logs", "--tail", "5", name, check=False)
        lines.append(f"--- {name}: {health.strip()[:1500]}\n{logs[-1500:]}")
    return "\n".join(lines)


def _health(container: str) -> str:
    out = podman("inspect", "--format", "{{json .State.Health}}", container, check=False)
    try:
        return str(json.loads(out or "null")["Status"])
    except (ValueError, TypeError, KeyError):
        return ""


def test_compose_up_brings_every_core_service_up(stack: ComposeStack) -> None:
    ps = stack.compose("ps", "--all", "--format", "json")
    assert ps.returncode == 0, ps.stderr
    rows = [json.loads(line) for line in ps.stdout.splitlines() if line.strip()]
    state = {row["Service"]: row["State"] for row in rows}
    assert state == {
        "reader": "running",
        "ranker": "running",
        "index": "running",
        "orchestrator": "running",
        "searxng": "running",
        "ollama": "running",
        "ollama-pull": "exited",
    }
    pull = podman("inspect", "--format", "{{.State.ExitCode}}", stack.container("ollama-pull"))
    assert pull.strip() == "0"
    for service in ("reader", "ranker", "index", "orchestrator", "searxng", "ollama"):
        assert _health(stack.container(service)) == "healthy", service


def test_compose_hardening_reaches_the_containers(stack: ComposeStack) -> None:
    for service in ("reader", "ranker", "index", "orchestrator", "searxng", "ollama"):
        host = json.loads(podman("inspect", stack.container(service)))[0]["HostConfig"]
        assert host["ReadonlyRootfs"] is True, service
        assert host["PidsLimit"] > 0, service
        assert host["Memory"] > 0, service
        assert "no-new-privileges" in " ".join(host.get("SecurityOpt") or []), service


def test_backend_network_has_no_route_out(stack: ComposeStack) -> None:
    probe = (
        "import socket, sys\n"
        "try:\n"
        f"    socket.create_connection(('{stack.standins.gateway}', "
        f"{stack.standins.ports['pages']}), timeout=3).close()\n"
        "    print('reached')\n"
        "except OSError:\n"
        "    print('unreachable')\n"
    )
    ranker = podman("exec", stack.container("ranker"), "python", "-c", probe).strip()
    index = podman("exec", stack.container("index"), "python", "-c", probe).strip()
    reader = podman("exec", stack.container("reader"), "python", "-c", probe).strip()
    assert (ranker, index, reader) == ("unreachable", "unreachable", "reached")


def test_one_question_through_compose(stack: ComposeStack) -> None:
    # The judge finds the snippets only partly sufficient, so the run reads the pages.
    stack.standins.llm.queue("judge", Say.json({"reasoning": "r", "sufficiency": "partial"}))
    reply = httpx.post(
        f"http://127.0.0.1:{stack.port}/v1/search",
        json={"query": "what causes spring tides?"},
        headers={"Accept": "application/json"},
        timeout=120,
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "answered", reply.text
    assert stack.standins.searxng.queries
    assert stack.standins.llm.calls
    deadline = time.monotonic() + 10
    while not set(stack.standins.page_requests) & set(PAGES) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(stack.standins.page_requests) & set(PAGES)


def test_the_bind_mounted_corpus_is_indexed_on_the_volume(stack: ComposeStack) -> None:
    url = f"http://127.0.0.1:{stack.port}"
    assert_note_indexed(wait_indexed(url))
    listing = podman("exec", stack.container("index"), "find", "/data", "-user", "10001")
    assert "/data/index/corpus/" in listing, listing
    ask_local(url)


def test_a_missing_corpus_folder_does_not_stop_the_orchestrator(
    stack: ComposeStack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A checkout without ./corpus (or a CORPUS_DIR not made yet): compose creates the folder
    (short-syntax bind mounts do) and the container starts with an empty /corpus."""
    missing = tmp_path_factory.mktemp("absent") / "corpus"
    probe = "import os; print(sorted(os.listdir('/corpus')))"
    run = stack.compose(
        *("run", "--rm", "--no-deps", "-T", "--entrypoint", "python", "orchestrator"),
        *("-c", probe),
        env={"CORPUS_DIR": str(missing)},
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]", run.stdout
    assert missing.is_dir()


def test_report_compose_numbers(stack: ComposeStack) -> None:
    """`compose up` to a healthy orchestrator, merged into build/test-containers.json."""
    report_file = ROOT / "build" / "test-containers.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    report["compose_up_to_healthy_s"] = stack.up_s
    report["compose_memory_after_question_mb"] = {
        service: memory_mb(stack.container(service))
        for service in ("reader", "ranker", "index", "orchestrator")  # searxng/ollama: stand-ins
    }
    report_file.parent.mkdir(exist_ok=True)
    report_file.write_text(json.dumps(report, indent=2) + "\n")
    assert stack.up_s > 0
