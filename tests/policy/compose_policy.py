"""The compose hardening policy as a pure function: ``violations(compose) -> [message, ...]``.

Used by tests/policy (static, in ``make test``) and tests/containers (``make test-containers``),
which also derives the podman flags for its run from the same compose services.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "compose.yaml"

#: ``image@sha256:<64 hex>``, optionally with a tag before the digest.
PINNED_IMAGE = re.compile(r"^[\w.\-/:]+@sha256:[0-9a-f]{64}$")
#: ``${NAME}``, ``${NAME:-default}``, ``${NAME-default}``, ``${NAME:?message}``, ``${NAME?message}``
_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")
LOOPBACK = {"127.0.0.1", "::1", "[::1]", "localhost"}
RESTART_POLICIES = {"always", "unless-stopped", "on-failure"}
# Services that must prove they are healthy by asking the service itself, not a TCP connect.
TCP_ONLY_PROBES = ("nc -z", "/dev/tcp", "fsockopen")
# Images built FROM scratch: no shell or client to run a probe with; nothing may wait for them.
UNPROBEABLE = ("/opentelemetry-collector-contrib:",)


def _index_data(index: Mapping[str, Any], ranker: Mapping[str, Any]) -> list[str]:
    """The index writes only its data: to a named volume holding INDEX_DATA_DIR. The ranker
    is stateless: no volume at all."""
    problems = []
    mounts = [str(m) for m in _as_list(index.get("volumes"))]
    named = [m for m in mounts if re.fullmatch(r"[\w.-]+:/[^:]*", m)]
    if len(named) != len(mounts) or len(mounts) != 1:
        problems.append("index: must mount exactly one named volume (no bind mounts)")
    data_dir = str((index.get("environment") or {}).get("INDEX_DATA_DIR", ""))
    if named and not data_dir.startswith(named[0].split(":", 1)[1].rstrip("/") + "/"):
        problems.append("index: INDEX_DATA_DIR must lie on its volume")
    if ranker.get("volumes"):
        problems.append("ranker: must be stateless (no volumes)")
    return problems


def _orchestrator_data(orch: Mapping[str, Any]) -> list[str]:
    """The orchestrator's database (ORCHESTRATOR_DATA_DIR) lies on a named volume."""
    data_dir = str((orch.get("environment") or {}).get("ORCHESTRATOR_DATA_DIR", ""))
    named = [
        str(m).split(":")[1].rstrip("/") + "/"
        for m in _as_list(orch.get("volumes"))
        if re.fullmatch(r"[\w.-]+:/[^:]*", str(m))
    ]
    if not any(data_dir.startswith(root) for root in named):
        return ["orchestrator: ORCHESTRATOR_DATA_DIR must lie on a named volume"]
    return []


def load(path: Path = COMPOSE_FILE) -> dict[str, Any]:
    """Parse a compose file (YAML anchors and merge keys resolved)."""
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise TypeError(f"{path}: not a mapping")
    return data


def variables(text: str) -> set[str]:
    """Names of every ``${VAR...}`` interpolated in ``text``."""
    return {m.group("name") for m in _VARIABLE.finditer(text)}


def interpolate(value: str, env: Mapping[str, str] | None = None) -> str:
    """Resolve compose interpolation with ``env`` (default: empty), using defaults when unset."""
    env = env or {}

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group("name"), m.group("op") or "", m.group("arg") or ""
        if name in env and (env[name] or not op.startswith(":")):
            return env[name]
        if op.endswith("-"):
            return arg
        if op.endswith("?"):
            return f"<required:{name}>"
        return ""

    return _VARIABLE.sub(one, value)


def published_host_ips(service: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Yield ``(host_ip, spec)`` for each published port; host_ip is "" when it binds all."""
    for entry in service.get("ports") or []:
        if isinstance(entry, Mapping):
            yield str(entry.get("host_ip", "")), str(entry)
            continue
        spec = interpolate(str(entry))
        mapping = spec.split("/", 1)[0]
        if mapping.startswith("["):  # [::1]:8080:8080
            host_ip = mapping[1 : mapping.index("]")]
        else:
            parts = mapping.split(":")
            host_ip = parts[0] if len(parts) == 3 else ""
        yield host_ip, str(entry)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _healthcheck_text(service: Mapping[str, Any]) -> str:
    test = (service.get("healthcheck") or {}).get("test")
    return " ".join(_as_list(test))


def service_violations(name: str, svc: Mapping[str, Any]) -> list[str]:
    """Hardening problems of one service."""
    problems: list[str] = []
    if svc.get("read_only") is not True:
        problems.append(f"{name}: read_only must be true")
    if "ALL" not in _as_list(svc.get("cap_drop")):
        problems.append(f"{name}: cap_drop must contain ALL")
    if svc.get("cap_add"):
        problems.append(f"{name}: cap_add is not allowed ({svc['cap_add']})")
    if svc.get("privileged"):
        problems.append(f"{name}: privileged is not allowed")
    if not any(o.startswith("no-new-privileges") for o in _as_list(svc.get("security_opt"))):
        problems.append(f"{name}: security_opt must contain no-new-privileges")
    if not svc.get("mem_limit"):
        problems.append(f"{name}: mem_limit missing")
    pids = svc.get("pids_limit")
    if not isinstance(pids, int) or pids <= 0:
        problems.append(f"{name}: pids_limit must be a positive integer")
    restart = str(svc.get("restart", "")).split(":", 1)[0]
    if restart not in RESTART_POLICIES:
        problems.append(f"{name}: restart must be one of {sorted(RESTART_POLICIES)}")
    logging = svc.get("logging") or {}
    options = logging.get("options") or {}
    if logging.get("driver") not in ("json-file", "local") or "max-size" not in options:
        problems.append(f"{name}: logging must rotate (json-file/local with max-size)")
    if svc.get("network_mode") == "host":
        problems.append(f"{name}: network_mode host is not allowed")
    for host_ip, spec in published_host_ips(svc):
        if host_ip not in LOOPBACK:
            problems.append(f"{name}: port {spec} is published beyond 127.0.0.1")
    image = svc.get("image")
    if "build" not in svc:
        if not isinstance(image, str) or not PINNED_IMAGE.match(image):
            problems.append(f"{name}: image {image!r} is not pinned by @sha256 digest")
    elif image is not None and not PINNED_IMAGE.match(str(image)):
        problems.append(f"{name}: a built service must not name an unpinned image ({image})")
    for dep, cond in (svc.get("depends_on") or {}).items():
        condition = (cond or {}).get("condition") if isinstance(cond, Mapping) else None
        if condition not in ("service_healthy", "service_completed_successfully"):
            problems.append(f"{name}: depends_on {dep} needs condition service_healthy")
    probe = _healthcheck_text(svc)
    if any(tcp in probe for tcp in TCP_ONLY_PROBES):
        problems.append(f"{name}: health check only tests a TCP connect")
    return problems


def _depends_condition(svc: Mapping[str, Any], dep: str) -> str | None:
    entry = (svc.get("depends_on") or {}).get(dep)
    return entry.get("condition") if isinstance(entry, Mapping) else None


def violations(compose: Mapping[str, Any]) -> list[str]:
    """Every policy violation in a parsed compose file; empty when it passes."""
    services: Mapping[str, Any] = compose.get("services") or {}
    if not services:
        return ["no services"]
    problems: list[str] = []
    for name, svc in services.items():
        problems += service_violations(name, svc)
        for dep in svc.get("depends_on") or {}:
            if dep not in services:
                problems.append(f"{name}: depends_on unknown service {dep}")
            elif (
                not (services[dep] or {}).get("healthcheck")
                and _depends_condition(svc, dep) != "service_completed_successfully"
            ):
                problems.append(f"{name}: depends on {dep}, which has no health check")
        one_shot = str(svc.get("restart", "")).startswith("on-failure")
        image = str(svc.get("image", ""))
        if not (one_shot or svc.get("healthcheck") or any(i in image for i in UNPROBEABLE)):
            problems.append(f"{name}: healthcheck missing")
    problems += _quarry_rules(services)
    return problems


def _quarry_rules(services: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    for grpc_service, port in (("reader", "50051"), ("ranker", "50052"), ("index", "50053")):
        svc = services.get(grpc_service)
        if svc is None:
            problems.append(f"{grpc_service}: missing")
            continue
        if svc.get("ports"):
            problems.append(f"{grpc_service}: must be internal only (expose, no ports)")
        if port not in _as_list(svc.get("expose")):
            problems.append(f"{grpc_service}: must expose {port}")
        if "grpc" not in _healthcheck_text(svc):
            problems.append(f"{grpc_service}: health check must ask gRPC health")
    orch = services.get("orchestrator") or {}
    if "/readyz" not in _healthcheck_text(orch):
        problems.append("orchestrator: health check must ask /readyz")
    if not orch.get("ports"):
        problems.append("orchestrator: must be published on 127.0.0.1")
    for dep in ("reader", "ranker", "index", "searxng", "ollama"):
        if _depends_condition(orch, dep) != "service_healthy":
            problems.append(f"orchestrator: must wait for {dep} to be healthy")
    if _depends_condition(orch, "ollama-pull") != "service_completed_successfully":
        problems.append("orchestrator: must wait for ollama-pull to complete successfully")
    env = orch.get("environment") or {}
    if interpolate(str(env.get("LLM_PROVIDER", ""))) != "ollama":
        problems.append("orchestrator: LLM_PROVIDER must default to ollama")
    searxng = services.get("searxng") or {}
    secret = str((searxng.get("environment") or {}).get("SEARXNG_SECRET", ""))
    if not re.fullmatch(r"\$\{SEARXNG_SECRET:\?[^}]*\}", secret):
        problems.append("searxng: SEARXNG_SECRET must come from ${SEARXNG_SECRET:?...}")
    mounts = _as_list(searxng.get("volumes"))
    if not any(m.endswith(":/etc/searxng/settings.yml:ro") for m in mounts):
        problems.append("searxng: settings.yml must be mounted read-only")
    if str(searxng.get("user", "")).split(":")[0] in ("", "0", "root"):
        problems.append("searxng: must run as its non-root user")
    problems += _index_data(services.get("index") or {}, services.get("ranker") or {})
    problems += _orchestrator_data(orch)
    for traced in ("otel-collector", "jaeger"):
        if "tracing" not in _as_list((services.get(traced) or {}).get("profiles")):
            problems.append(f"{traced}: must sit behind the tracing profile")
    return problems
