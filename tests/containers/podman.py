"""Podman helpers for tests/containers: run commands, translate compose services to run flags."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.policy.compose_policy import interpolate

PODMAN = shutil.which("podman") or "podman"


def podman(*args: str, check: bool = True, timeout: float = 120.0) -> str:
    """Run ``podman args``; return stdout (stderr is dropped: podman logs systemd noise there)."""
    proc = subprocess.run(
        [PODMAN, *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and proc.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)} -> {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def healthy(container: str) -> bool:
    """Run the container's configured health check once (what compose's engine would run)."""
    proc = subprocess.run(
        [PODMAN, "healthcheck", "run", container],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return proc.returncode == 0


def wait_healthy(container: str, started: float, deadline_s: float = 90.0) -> float:
    """Poll the health check until it passes; return seconds since ``started``."""
    end = started + deadline_s
    while time.monotonic() < end:
        state = podman("inspect", "--format", "{{.State.Status}}", container).strip()
        if state in ("exited", "stopped"):
            logs = podman("logs", "--tail", "40", container, check=False)
            raise RuntimeError(f"{container} exited before it was healthy:\n{logs}")
        if healthy(container):
            return time.monotonic() - started
        time.sleep(0.25)
    logs = podman("logs", "--tail", "40", container, check=False)
    raise TimeoutError(f"{container} not healthy within {deadline_s} s:\n{logs}")


def hardening_flags(service: Mapping[str, Any]) -> list[str]:
    """``podman run`` flags for a compose service's hardening keys (same values as compose)."""
    flags: list[str] = []
    if service.get("read_only"):
        flags.append("--read-only")
    flags += [f"--cap-drop={cap}" for cap in service.get("cap_drop", [])]
    for opt in service.get("security_opt", []):
        flags.append(f"--security-opt={str(opt).replace(':true', '')}")
    for mount in service.get("tmpfs", []):
        flags.append(f"--tmpfs={mount}")
    if "mem_limit" in service:
        flags.append(f"--memory={interpolate(str(service['mem_limit']))}")
    if "pids_limit" in service:
        flags.append(f"--pids-limit={service['pids_limit']}")
    if "user" in service:
        flags.append(f"--user={service['user']}")
    check = service.get("healthcheck") or {}
    test = check.get("test")
    if isinstance(test, list) and test and test[0] == "CMD":
        # podman takes the argv as a JSON array without compose's leading "CMD"
        flags.append(f"--health-cmd={json.dumps(test[1:])}")
    elif isinstance(test, list) and test and test[0] == "CMD-SHELL":
        flags.append(f"--health-cmd={test[1]}")
    for key in ("interval", "timeout", "retries", "start_period"):
        if key in check:
            flag = key.replace("_", "-")
            flags.append(f"--health-{flag}={check[key]}")
    return flags


def volume_flags(
    service: Mapping[str, Any], env: Mapping[str, str], named: Mapping[str, str], base: Path
) -> list[str]:
    """``podman run --volume`` flags for a compose service's short-syntax ``volumes``.

    A named volume becomes the podman volume ``named[name]`` (the caller creates one per test
    run, as compose creates ``<project>_<name>``); a bind mount's host path is interpolated with
    ``env`` and, when relative, resolved against ``base`` (compose resolves it against the
    project directory). Modes (``ro``) are kept.
    """
    flags: list[str] = []
    for entry in service.get("volumes") or []:
        if isinstance(entry, Mapping):
            raise TypeError(f"long-syntax volume not supported here: {entry}")
        source, target, *mode = interpolate(str(entry), env).split(":")
        if source.startswith((".", "/")):
            host = str((base / source).resolve())
        elif source in named:
            host = named[source]
        else:
            raise KeyError(f"no podman volume given for the named volume {source!r}")
        flags.append(f"--volume={':'.join([host, target, *mode])}")
    return flags


def environment(service: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """The service's compose environment, interpolated with ``env`` (defaults where unset)."""
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        raw = dict(item.split("=", 1) for item in raw)
    return {str(k): interpolate(str(v), env) for k, v in raw.items()}


def memory_mb(container: str) -> float:
    """Current memory use of ``container`` in MB (podman stats, one sample)."""
    out = podman("stats", "--no-stream", "--no-reset", "--format", "json", container)
    stats = json.loads(out)[0]
    usage = str(stats.get("mem_usage", "")).split("/")[0].strip()
    number = float("".join(c for c in usage if c.isdigit() or c == "."))
    unit = usage.lstrip("0123456789.").strip().lower()
    scale = {"b": 1e-6, "kb": 1e-3, "kib": 1.024e-3, "mb": 1.0, "mib": 1.048576}
    scale |= {"gb": 1e3, "gib": 1073.741824}
    return round(number * scale.get(unit, 1.0), 1)
