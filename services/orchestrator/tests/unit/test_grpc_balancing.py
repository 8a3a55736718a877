"""A target with a resolver scheme spreads calls over every address it resolves to (round_robin):
on Kubernetes the orchestrator reaches scaled-out readers through ``dns:///reader-headless:50051``,
one A record per pod (deploy/k8s)."""

from __future__ import annotations

import asyncio
import json

import pytest
from orchestrator.adapters.grpc import calls
from orchestrator.adapters.grpc.reader import ReaderClient

from services.orchestrator.tests.unit.doubles import FakeReader, grpc_server

PAGE = {"http://a.test/": ("A", "Quarry reads pages.")}


def _policies(options: list[tuple[str, object]]) -> list[object]:
    return [
        next(iter(entry))
        for key, value in options
        if key == "grpc.service_config"
        for entry in json.loads(str(value))["loadBalancingConfig"]
    ]


@pytest.mark.parametrize(
    "address",
    ["dns:///reader-headless:50051", "DNS:reader-headless:50051", "ipv4:10.0.0.1:1,10.0.0.2:1"],
)
def test_resolver_targets_get_round_robin(address: str) -> None:
    options = calls.channel_options(address, [("grpc.max_reconnect_backoff_ms", 1000)])
    assert _policies(options) == ["round_robin"]
    assert ("grpc.max_reconnect_backoff_ms", 1000) in options


@pytest.mark.parametrize("address", ["reader:50051", "127.0.0.1:50051", "unix:/tmp/reader.sock"])
def test_plain_targets_keep_the_default_policy(address: str) -> None:
    assert _policies(calls.channel_options(address)) == []


def test_a_service_config_of_the_callers_own_is_kept() -> None:
    own = ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"pick_first": {}}]}))
    assert _policies(calls.channel_options("dns:///reader:1", [own])) == ["pick_first"]


async def test_calls_reach_every_address_of_a_multi_address_target() -> None:
    """Two real readers behind one target: pick_first would send every read to one of them."""
    readers = [FakeReader(PAGE), FakeReader(PAGE)]
    servers = [grpc_server(r) for r in readers]
    ports = [await s.start() for s in servers]
    try:
        target = "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in ports)
        async with calls.channel(target) as channel:
            client = ReaderClient(channel, limit=asyncio.Semaphore(1), retry_delay_s=0.01)
            # round_robin rotates over the connected addresses; the second may connect a little
            # after the first, so read until both have answered (bounded, never timed).
            for _ in range(200):
                await client.read("http://a.test/", timeout=10)
                if all(r.calls for r in readers):
                    break
        assert all(r.calls for r in readers), [len(r.calls) for r in readers]
    finally:
        for server in servers:
            await server.stop(0)
