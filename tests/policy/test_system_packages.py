"""scripts/system-packages.sh: `make test` installs the Debian packages it needs as root, and
otherwise stops before anything runs with the one command to type.

The script runs for real against stand-ins for ``dpkg-query``, ``id`` and ``apt-get`` placed first
on PATH, so no test touches the machine's packages or depends on what is installed on it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "system-packages.sh"
TEST_PACKAGES = [
    "g++",
    "searx",
    "sqlite3-doc",
    "git-doc",
    "postfix-doc",
    "zsh-doc",
    "apache2-doc",
    "ffmpeg-doc",
    "chromium",
    "postgresql",
    "redis-server",
]

# dpkg-query -W -f='${Status}' PKG for a package listed in $FAKE_DPKG ("name=status;…"); an
# unknown package is an error, as with the real dpkg-query.
_DPKG_QUERY = """#!/bin/bash
pkg="${@: -1}"
IFS=';' read -ra rows <<< "$FAKE_DPKG"
for row in "${rows[@]}"; do
  if [ "${row%%=*}" = "$pkg" ]; then printf '%s' "${row#*=}"; exit 0; fi
done
echo "dpkg-query: no packages found matching $pkg" >&2
exit 1
"""
_ID = '#!/bin/bash\n[ "$1" = "-u" ] && echo "$FAKE_UID"\n'
_APT_GET = '#!/bin/bash\necho "$*" >> "$FAKE_APT_LOG"\n'
# Stand-ins for uv and the venv's tools: `make test` below must never reach them.
_TOOL = '#!/bin/bash\necho "$0 $*" >> "$FAKE_TOOL_LOG"\n'


def _fake_bin(tmp_path: Path) -> Path:
    fake = tmp_path / "bin"
    fake.mkdir()
    stand_ins = {"dpkg-query": _DPKG_QUERY, "id": _ID, "apt-get": _APT_GET}
    stand_ins |= dict.fromkeys(("uv", "python", "ruff", "mypy"), _TOOL)
    for name, text in stand_ins.items():
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    return fake


def _env(tmp_path: Path, installed: dict[str, str], uid: int) -> dict[str, str]:
    fake = tmp_path / "bin" if (tmp_path / "bin").exists() else _fake_bin(tmp_path)
    return {
        "PATH": f"{fake}:{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "FAKE_DPKG": ";".join(f"{k}={v}" for k, v in installed.items()),
        "FAKE_UID": str(uid),
        "FAKE_APT_LOG": str(tmp_path / "apt.log"),
        "FAKE_TOOL_LOG": str(tmp_path / "tools.log"),
    }


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], env=env, capture_output=True, text=True, check=False, timeout=60
    )


def _apt_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "apt.log"
    return log.read_text().splitlines() if log.exists() else []


OK = "install ok installed"
# searx and chromium are missing; git-doc was removed with its configuration kept ("rc").
PARTLY = {
    "g++": OK,
    "sqlite3-doc": OK,
    "git-doc": "deinstall ok config-files",
    "postfix-doc": OK,
    "zsh-doc": OK,
    "apache2-doc": OK,
    "ffmpeg-doc": OK,
    "postgresql": OK,
    "redis-server": OK,
}


def test_a_user_gets_the_one_command_naming_exactly_the_missing_packages(tmp_path: Path) -> None:
    done = _run(_env(tmp_path, PARTLY, uid=1000), "test")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[-1] == "sudo apt-get update && sudo apt-get install -y searx git-doc chromium"
    assert _apt_calls(tmp_path) == []


def test_check_installs_nothing_even_as_root(tmp_path: Path) -> None:
    done = _run(_env(tmp_path, PARTLY, uid=0), "--check", "test")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].endswith("install -y searx git-doc chromium")
    assert _apt_calls(tmp_path) == []


def test_root_installs_exactly_the_missing_packages_after_an_update(tmp_path: Path) -> None:
    done = _run(_env(tmp_path, PARTLY, uid=0), "test")
    assert done.returncode == 0, done.stderr
    calls = _apt_calls(tmp_path)
    assert len(calls) == 2
    assert calls[0].endswith(" update")
    assert calls[1].endswith(" install -y searx git-doc chromium")


@pytest.mark.parametrize("uid", [0, 1000])
def test_nothing_missing_is_silent_and_succeeds(tmp_path: Path, uid: int) -> None:
    done = _run(_env(tmp_path, dict.fromkeys(TEST_PACKAGES, OK), uid=uid), "test")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert _apt_calls(tmp_path) == []


def test_the_build_step_asks_only_for_the_compiler(tmp_path: Path) -> None:
    done = _run(_env(tmp_path, {}, uid=1000), "build")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].endswith("apt-get install -y g++")


def test_make_test_stops_before_anything_runs_for_a_user(tmp_path: Path) -> None:
    """The `system` prerequisite fails first: no uv, no lint, no pytest.

    uv and the venv (PY, VENV) are stand-ins that only log, so a broken order shows up in the
    log instead of running the real suite inside this test.
    """
    env = _env(tmp_path, {}, uid=1000)
    fake = tmp_path / "bin"
    make = ["make", "--no-print-directory", f"VENV={tmp_path}", f"PY={fake}/python", "test"]
    done = subprocess.run(
        make,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "sudo apt-get update && sudo apt-get install -y " + " ".join(TEST_PACKAGES) in out
    assert not (tmp_path / "tools.log").exists()
    assert _apt_calls(tmp_path) == []
