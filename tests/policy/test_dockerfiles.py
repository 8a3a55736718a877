"""The service Dockerfiles: pinned bases, non-root, no build tools left in the final stage."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from tests.policy.compose_policy import PINNED_IMAGE, load

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("reader", "ranker", "index", "orchestrator")
# Workspace members a service depends on (pyproject.toml), which its image must hold too:
# none, what services share lives in libs/ (the import contract in pyproject.toml holds it).
DEPENDS: dict[str, set[str]] = {}
# Debian packages a service's final stage may install: run-time needs, never build tools.
RUNTIME_PACKAGES = {"reader": {"chromium"}}


def _dockerfile(service: str) -> str:
    return (ROOT / "services" / service / "Dockerfile").read_text()


def _final_stage(text: str) -> str:
    return text[text.rindex("\nFROM ") :]


@pytest.mark.parametrize("service", SERVICES)
def test_base_images_are_pinned_by_digest(service: str) -> None:
    text = _dockerfile(service)
    defaults = dict(re.findall(r"^ARG (\w+_IMAGE)=(\S+)$", text, flags=re.M))
    # The wheelhouse is empty unless an offline build passes one in.
    assert defaults.pop("WHEELHOUSE_IMAGE") == "scratch"
    assert set(defaults) == {"PYTHON_IMAGE", "UV_IMAGE"}
    for image in defaults.values():
        assert PINNED_IMAGE.match(image), image
    for line in re.findall(r"^FROM (\S+)", text, flags=re.M):
        assert line.startswith("${"), line
    # A `# syntax=` line would make BuildKit pull an (unpinned) frontend image.
    assert not re.search(r"^# *syntax=", text, flags=re.M | re.I)


@pytest.mark.parametrize("service", SERVICES)
def test_final_stage_is_non_root_and_clean(service: str) -> None:
    final = _final_stage(_dockerfile(service))
    assert final.startswith("\nFROM ${PYTHON_IMAGE}\n")
    assert re.search(r"^USER 10001:10001$", final, flags=re.M)
    assert "--from=uv" not in final
    installs = re.findall(r"apt-get install ([^;&\n]*)", final)
    packages = {w for args in installs for w in args.split() if not w.startswith("-")}
    assert packages <= RUNTIME_PACKAGES.get(service, set()), packages
    for args in installs:
        assert "--no-install-recommends" in args
    if installs:
        assert "rm -rf /var/lib/apt/lists/*" in final
    assert re.search(r"^HEALTHCHECK .*\n\s+CMD \[\"python\", \"/app/healthcheck.py\"", final, re.M)
    assert f'ENTRYPOINT ["python", "-m", "{service}"]' in final


@pytest.mark.parametrize("service", SERVICES)
def test_installs_only_its_own_member(service: str) -> None:
    text = _dockerfile(service)
    assert f"--package {service} " in text
    others = set(SERVICES) - {service} - DEPENDS.get(service, set())
    for other in others:
        assert f"COPY services/{other}/ " not in text
        assert f"services/{other};" not in text


@pytest.mark.parametrize("service", SERVICES)
def test_image_health_check_is_the_compose_one(service: str) -> None:
    final = _final_stage(_dockerfile(service))
    cmd = re.search(r"CMD (\[.*\])\n", final)
    assert cmd is not None
    compose_test = load()["services"][service]["healthcheck"]["test"]
    assert json.loads(cmd.group(1)) == compose_test[1:]


def test_reader_image_has_chromium_for_the_render_tier() -> None:
    final = _final_stage(_dockerfile("reader"))
    assert re.search(r"apt-get install -y --no-install-recommends chromium;", final)
    assert "READER_CHROMIUM_PATH=/usr/bin/chromium" in final
    # A read-only root: Chromium's profile and caches go to the /tmp tmpfs.
    assert "HOME=/tmp" in final
    assert final.index("apt-get install") < final.index("USER 10001:10001")


def _locked() -> dict[str, list[str]]:
    """Each locked package's dependency names (uv.lock)."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    return {p["name"]: [d["name"] for d in p.get("dependencies", [])] for p in lock["package"]}


def test_the_orchestrator_image_holds_every_dependency_of_the_quarry_client() -> None:
    # The image installs clients/cli with --no-deps over the orchestrator's exported
    # requirements, so a client dependency the orchestrator lacks would be missing at run time.
    text = _dockerfile("orchestrator")
    assert "COPY clients/cli/ clients/cli/" in text
    assert re.search(r"--no-deps [^\n]*\bclients/cli\b", text)
    deps = _locked()
    closure: set[str] = set()
    todo = ["orchestrator"]
    while todo:
        name = todo.pop()
        if name not in closure:
            closure.add(name)
            todo.extend(deps.get(name, []))
    assert set(deps["quarry-cli"]) <= closure, set(deps["quarry-cli"]) - closure


@pytest.mark.parametrize("service", SERVICES)
def test_every_workspace_member_pyproject_is_in_the_image(service: str) -> None:
    # `uv export` needs the whole workspace: a member missing from the build stage fails it.
    members = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    text = _dockerfile(service)
    for member in members["members"]:
        assert f"COPY {member}/pyproject.toml {member}/\n" in text, member
