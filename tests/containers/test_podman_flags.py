"""The compose -> ``podman run`` translation the container test relies on (pure; runs in
``make test``, no podman needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.containers.podman import hardening_flags, volume_flags
from tests.policy.compose_policy import load

SERVICES = load()["services"]
BASE = Path("/repo")


def test_the_index_named_volume_becomes_the_given_podman_volume() -> None:
    flags = volume_flags(SERVICES["index"], {}, {"quarry-data": "quarry-ct-data-1"}, BASE)
    assert flags == ["--volume=quarry-ct-data-1:/data"]


# The orchestrator keeps its SQLite database (research runs, sessions) on quarry-data.
DATA = {"quarry-data": "quarry-test-data"}


def test_the_corpus_bind_mount_defaults_to_the_repo_folder_read_only() -> None:
    assert volume_flags(SERVICES["orchestrator"], {}, DATA, BASE) == [
        "--volume=/repo/corpus:/corpus:ro",
        "--volume=quarry-test-data:/data",
    ]


def test_the_corpus_bind_mount_follows_corpus_dir() -> None:
    env = {"CORPUS_DIR": "/srv/notes"}
    assert volume_flags(SERVICES["orchestrator"], env, DATA, BASE) == [
        "--volume=/srv/notes:/corpus:ro",
        "--volume=quarry-test-data:/data",
    ]


def test_a_named_volume_without_a_podman_volume_is_refused() -> None:
    with pytest.raises(KeyError, match="quarry-data"):
        volume_flags(SERVICES["index"], {}, {}, BASE)


def test_long_syntax_is_refused_rather_than_ignored() -> None:
    service = {"volumes": [{"type": "bind", "source": "./x", "target": "/x"}]}
    with pytest.raises(TypeError, match="long-syntax"):
        volume_flags(service, {}, {}, BASE)


def test_hardening_flags_carry_the_compose_keys() -> None:
    flags = hardening_flags(SERVICES["ranker"])
    assert "--read-only" in flags
    assert "--cap-drop=ALL" in flags
    assert "--security-opt=no-new-privileges" in flags
    assert "--pids-limit=128" in flags
