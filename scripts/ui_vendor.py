"""The web UI's vendored JavaScript libraries: pinned npm releases, checked byte for byte.

The UI has no build step. Its libraries (marked for Markdown, DOMPurify for sanitising,
highlight.js's browser build from ``@highlightjs/cdn-assets`` for code blocks) are copied once
from their npm release tarballs into ``orchestrator/api/web/static/vendor/``; the pins
live in ``vendor.json`` there: npm's ``integrity`` of each tarball (sha512) and the ``sri``
(sha384) of the file taken from it, which ``index.html`` repeats in its ``integrity=`` attributes
so the browser itself refuses a changed file.

    python -m scripts.ui_vendor            # offline check (also run by tests/policy)
    python -m scripts.ui_vendor --fetch    # npm pack the pinned tarballs, verify, re-extract
    python -m scripts.ui_vendor --bump marked 18.3.0   # new version: record its integrity
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "services/orchestrator/src/orchestrator/api/web/static"
VENDOR = STATIC / "vendor"
MANIFEST = VENDOR / "vendor.json"
_SCRIPT_TAG = re.compile(r'<script src="/ui/vendor/([^"]+)" integrity="([^"]+)"')


def sri(data: bytes) -> str:
    """The Subresource Integrity value (sha384) of ``data``."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


def npm_integrity(data: bytes) -> str:
    """npm's ``dist.integrity`` of a tarball (sha512)."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def load() -> dict[str, Any]:
    """The pins, by package name."""
    pins: dict[str, Any] = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return pins


def check() -> list[str]:
    """Problems with the vendored files (empty when every file matches its pin)."""
    problems = []
    pins = load()
    for name, pin in pins.items():
        for dest, src in ((pin["dest"], pin["file"]), (pin["license_dest"], pin["license"])):
            path = VENDOR / dest
            if not path.is_file():
                problems.append(f"{name}: {path} is missing ({src} of the npm tarball)")
        path = VENDOR / pin["dest"]
        if path.is_file() and sri(path.read_bytes()) != pin["sri"]:
            problems.append(f"{name}: {path.name} does not match its pinned sri")
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    tags = dict(_SCRIPT_TAG.findall(html))
    for name, pin in pins.items():
        if tags.get(pin["dest"]) != pin["sri"]:
            problems.append(
                f"{name}: index.html must load {pin['dest']} with integrity={pin['sri']}"
            )
    return problems


def _pack(spec: str, workdir: Path) -> bytes:
    # npm from PATH on a maintainer's machine, with the pinned spec from vendor.json
    out = subprocess.run(  # noqa: S603
        ["npm", "pack", spec, "--json", "--pack-destination", str(workdir)],  # noqa: S607
        check=True,
        capture_output=True,
        text=True,
        cwd=workdir,
    )
    filename = str(json.loads(out.stdout)[0]["filename"])
    return (workdir / filename).read_bytes()


def _member(tarball: bytes, name: str, workdir: Path) -> bytes:
    path = workdir / "t.tgz"
    path.write_bytes(tarball)
    with tarfile.open(path) as tar:
        member = tar.extractfile(name)
        if member is None:
            raise SystemExit(f"{name} is not a file in the tarball")
        return member.read()


def fetch(bump: tuple[str, str] | None = None) -> None:
    """Download the pinned tarballs with npm, verify them and write the files and pins."""
    pins = load()
    if bump is not None:
        pins[bump[0]]["version"] = bump[1]
    for name, pin in pins.items():
        with tempfile.TemporaryDirectory() as tmp:
            tarball = _pack(f"{name}@{pin['version']}", Path(tmp))
            integrity = npm_integrity(tarball)
            if bump is not None and bump[0] == name:
                pin["integrity"] = integrity
            if integrity != pin["integrity"]:
                raise SystemExit(f"{name}@{pin['version']}: tarball integrity {integrity} != pin")
            data = _member(tarball, pin["file"], Path(tmp))
            (VENDOR / pin["dest"]).write_bytes(data)
            (VENDOR / pin["license_dest"]).write_bytes(_member(tarball, pin["license"], Path(tmp)))
            pin["sri"] = sri(data)
    MANIFEST.write_text(json.dumps(pins, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Check (default), fetch or bump the vendored libraries."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fetch", action="store_true", help="re-download and verify with npm")
    parser.add_argument("--bump", nargs=2, metavar=("PACKAGE", "VERSION"))
    args = parser.parse_args(argv)
    if args.fetch or args.bump:
        fetch(tuple(args.bump) if args.bump else None)
    problems = check()
    for problem in problems:
        print(f"ui-vendor: {problem}", file=sys.stderr)  # noqa: T201 - a command-line tool
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
