"""Reader settings from READER_* variables."""

from __future__ import annotations

import ipaddress

import pytest
from pydantic import ValidationError
from reader.config import Settings


def test_defaults_are_safe() -> None:
    s = Settings()
    assert s.port == 50051
    assert s.allow_private_networks is False
    assert s.allowed_cidrs == ()
    assert (s.max_bytes, s.timeout_s, s.max_redirects) == (2 * 1024 * 1024, 8.0, 5)
    assert s.cache_enabled
    assert s.cache_ttl_s == 600
    assert s.worker_count >= 1


def test_environment_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("READER_ALLOWED_CIDRS", "127.0.0.1/32, 10.1.0.0/16")
    monkeypatch.setenv("READER_ALLOW_PRIVATE_NETWORKS", "true")
    monkeypatch.setenv("READER_WORKERS", "3")
    monkeypatch.setenv("READER_CACHE_ENABLED", "false")
    s = Settings()
    assert s.allowed_cidrs == (
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("10.1.0.0/16"),
    )
    assert s.allow_private_networks
    assert s.worker_count == 3
    assert not s.cache_enabled


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("READER_ALLOWED_CIDRS", "not-a-network"),
        ("READER_MAX_BYTES", "10"),
        ("READER_TIMEOUT_S", "0"),
        ("READER_MAX_REDIRECTS", "-1"),
        ("READER_PORT", "70000"),
    ],
)
def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError):
        Settings()
