"""LLM lanes: research never takes the last slot from an interactive call."""

from __future__ import annotations

import asyncio

from orchestrator.core.lanes import Lane, LlmLanes

QUEUE: list[Lane] = ["research", "research", "research", "research", "interactive"]


async def _hold(lanes: LlmLanes, lane: Lane, release: asyncio.Event, got: list[str]) -> None:
    async with lanes.slot(lane):
        got.append(lane)
        await release.wait()


async def _started(lanes: LlmLanes, lanes_asked: list[Lane]) -> tuple[list[str], asyncio.Event]:
    release = asyncio.Event()
    got: list[str] = []
    for lane in lanes_asked:
        asyncio.get_running_loop().create_task(_hold(lanes, lane, release, got))
        await asyncio.sleep(0)  # queued in this order
    for _ in range(5):
        await asyncio.sleep(0)
    return got, release


async def test_research_leaves_a_slot_for_an_interactive_call() -> None:
    lanes = LlmLanes(total=2)
    assert lanes.research == 1
    got, release = await _started(lanes, QUEUE)
    assert got == ["research", "interactive"]  # the question went past three queued calls
    release.set()


async def test_uncapped_research_is_one_fifo_queue() -> None:
    # research == total: the old behaviour (the lanes benchmark's baseline)
    lanes = LlmLanes(total=2, research=2)
    got, release = await _started(lanes, QUEUE)
    assert got == ["research", "research"]  # the question waits behind every research call
    release.set()


async def test_the_embedded_servers_research_lane_sends_one_research_call_at_a_time() -> None:
    # `make run`: four slots, research lane 1 — the single-slot server queues at most one
    # research call ahead of a question.
    lanes = LlmLanes(total=4, research=1)
    got, release = await _started(lanes, QUEUE)
    assert got == ["research", "interactive"]
    release.set()
