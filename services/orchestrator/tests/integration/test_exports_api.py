"""Exports and run bundles through the real HTTP API (uvicorn, SQLite, the real reader and
ranker, the scripted SearXNG and LLM): every format of a finished research run and of a
conversation; owners only; a bundle with no secret in it that the replay (`quarry-replay`, here
in this process) replays with the network blocked, giving the run's report and citations; and
`quarry replay`, the client's command, running that program for its output and exit status."""

from __future__ import annotations

import asyncio
import io
import socket
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from orchestrator.replay import main as replay
from quarry_cli.main import main

from services.orchestrator.tests.integration.support import World, world
from services.orchestrator.tests.integration.test_owners import ALICE, BOB, ROOT, auth, team

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["world"]  # the fixture, imported so pytest finds it here

LLM_KEY = "sk-live-llm-key-0123456789abcdef"
URL_TOKEN = "urltoken0123456789XYZ"  # noqa: S105 - a fake credential the bundle must drop
QUERY = f"how do tides work (see https://notes.example/t?access_token={URL_TOKEN})"
SECRETS = (ALICE, BOB, ROOT, LLM_KEY, URL_TOKEN)
MEDIA = {
    "md": "text/markdown",
    "html": "text/html",
    "pdf": "application/pdf",
    "json": "application/json",
    "bibtex": "application/x-bibtex",
    "ris": "application/x-research-info-systems",
}


@contextmanager
def network_blocked() -> Iterator[list[Any]]:
    """Every outbound connection in the process refused and noted (the replay must make none)."""
    attempts: list[Any] = []
    saved = socket.socket.connect

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("network blocked by the test")

    socket.socket.connect = refuse  # type: ignore[method-assign,assignment]
    try:
        yield attempts
    finally:
        socket.socket.connect = saved  # type: ignore[method-assign]


async def _run(api: Any) -> str:
    reply = await api.client.post("/v1/research", json={"query": QUERY}, headers=auth(ALICE))
    assert reply.status_code == 202, reply.text
    run_id = str(reply.json()["research_id"])
    events = await api.client.get(f"/v1/research/{run_id}/events", headers=auth(ALICE))
    assert "event: research.completed" in events.text
    return run_id


async def _exports_open(api: Any, path: str) -> None:
    for fmt, media in MEDIA.items():
        reply = await api.client.get(f"{path}/export?format={fmt}", headers=auth(ALICE))
        assert reply.status_code == 200, (fmt, reply.text)
        assert reply.headers["content-type"].startswith(media), fmt
        assert "attachment" in reply.headers["content-disposition"]
        if fmt == "pdf":
            assert reply.content.startswith(b"%PDF")
        if fmt == "json":
            assert orjson.loads(reply.content)["parts"]
    bad = await api.client.get(f"{path}/export?format=docx", headers=auth(ALICE))
    assert bad.status_code == 422
    assert bad.headers["content-type"].startswith("application/problem+json")


def _files(bundle: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


async def test_research_run_exports_and_its_bundle_replays_offline(
    world: World, tmp_path: Path
) -> None:
    async with team(world, tmp_path, llm_api_key=LLM_KEY) as api:
        run_id = await _run(api)
        path = f"/v1/research/{run_id}"
        await _exports_open(api, path)
        for tail in ("/export?format=html", "/bundle"):  # another user: as if it never was
            reply = await api.client.get(path + tail, headers=auth(BOB))
            assert reply.status_code == 404, tail
        view = (await api.client.get(path, headers=auth(ALICE))).json()
        bundle = await api.client.get(f"{path}/bundle", headers=auth(ALICE))
        assert bundle.status_code == 200
        assert bundle.headers["content-type"] == "application/zip"
        out = tmp_path / "cli.pdf"
        argv = ["--url", api.base, "--token", ALICE, "export", "research", run_id, "-o", str(out)]
        assert await asyncio.to_thread(main, argv) == 0
        assert out.read_bytes().startswith(b"%PDF")  # the extension picked the format
        html = tmp_path / "followed.html"  # `quarry research -o` picks by extension too
        argv = ["--url", api.base, "--token", ALICE, "research", "--resume", run_id, "-q"]
        assert await asyncio.to_thread(main, [*argv, "-o", str(html)]) == 0
        assert html.read_text().startswith("<!DOCTYPE html>")

    files = _files(bundle.content)
    assert set(files) >= {"manifest.json", "run.json", "events.jsonl", "recording.jsonl"}
    for name, data in files.items():  # no secret in any file, however it got into the run
        for secret in SECRETS:
            assert secret.encode() not in data, (name, secret)
    recording = [orjson.loads(line) for line in files["recording.jsonl"].splitlines()]
    kinds = {e["kind"] for e in recording}
    assert {"llm.structured", "llm.stream", "search", "read", "judge", "rank.passages"} <= kinds
    read = next(e for e in recording if e["kind"] == "read" and e["status"] == "OK")
    assert read["final_url"]
    assert len(read["sha256"]) == 64
    assert read["text"]
    assert all(e["messages"] for e in recording if e["kind"].startswith("llm."))

    bundle_file = tmp_path / "run.bundle.zip"
    bundle_file.write_bytes(bundle.content)
    printed = io.StringIO()
    with network_blocked() as attempts:
        status = await asyncio.to_thread(replay, [str(bundle_file), "--json"], printed)
    result = orjson.loads(printed.getvalue())
    assert attempts == []
    assert status == 0, result
    assert result["replayed"]
    assert result["same_answer"]
    assert result["same_citations"]
    # the run's report, as the bundle holds it: the URL's token redacted
    assert result["answer"] == view["report"].replace(URL_TOKEN, "[redacted]")
    assert result["cited"] == result["recorded_cited"]
    assert result["cited"]
    assert result["prompts"]["differ"] == 0
    assert result["prompts"]["matched"] >= 4
    assert result["grades"]["supported"] + result["grades"]["partly"] > 0


async def test_conversation_exports_one_answer_or_all_and_bundles(
    world: World, tmp_path: Path
) -> None:
    async with team(world, tmp_path) as api:
        for query in ("how do tides work", "what are spring tides"):
            body = {"query": query, "session_id": "talk", "options": {"sources": ["web"]}}
            reply = await api.client.post(
                "/v1/search", json=body, headers={"Accept": "application/json", **auth(ALICE)}
            )
            assert reply.status_code == 200, reply.text
        await _exports_open(api, "/v1/sessions/talk")
        one = await api.client.get(
            "/v1/sessions/talk/export?format=json&turn=2", headers=auth(ALICE)
        )
        assert [p["question"] for p in orjson.loads(one.content)["parts"]] == [
            "what are spring tides"
        ]
        missing = await api.client.get("/v1/sessions/talk/export?turn=9", headers=auth(ALICE))
        assert missing.status_code == 404
        assert (
            await api.client.get("/v1/sessions/talk/bundle", headers=auth(BOB))
        ).status_code == 404
        bundle = await api.client.get("/v1/sessions/talk/bundle", headers=auth(ALICE))
        assert bundle.status_code == 200
    files = _files(bundle.content)
    assert len(orjson.loads(files["session.json"])["turns"]) == 2
    path = tmp_path / "talk.zip"
    path.write_bytes(bundle.content)
    printed = io.StringIO()
    assert await asyncio.to_thread(main, ["replay", str(path), "--json"], printed) == 0
    assert not orjson.loads(printed.getvalue())["replayed"]  # re-graded only


async def test_replay_refuses_a_file_that_is_not_a_bundle(tmp_path: Path) -> None:
    path = tmp_path / "not.zip"
    path.write_bytes(b"PK\x03\x04 nonsense")
    assert await asyncio.to_thread(main, ["replay", str(path)]) == 2


def _tampered(bundle: bytes) -> bytes:
    """The bundle with the model's first report section output changed."""
    files = _files(bundle)
    lines = [orjson.loads(line) for line in files["recording.jsonl"].splitlines()]
    first = next(e for e in lines if e["kind"] == "llm.stream" and e["phase"] == "synthesis")
    first["output"] = "The moon is made of cheese [1]."
    files["recording.jsonl"] = b"".join(orjson.dumps(e) + b"\n" for e in lines)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


async def test_a_replay_of_other_model_outputs_says_the_answer_differs(
    world: World, tmp_path: Path
) -> None:
    async with team(world, tmp_path) as api:
        run_id = await _run(api)
        bundle = await api.client.get(f"/v1/research/{run_id}/bundle", headers=auth(ALICE))
    path = tmp_path / "tampered.zip"
    path.write_bytes(_tampered(bundle.content))
    printed = io.StringIO()
    assert await asyncio.to_thread(main, ["replay", str(path), "--json"], printed) == 1
    result = orjson.loads(printed.getvalue())
    assert result["same_answer"] is False
    # the replay ran the citation check too: no passage says so, so the citation went
    assert "The moon is made of cheese." in result["answer"]
    assert "cheese [1]" not in result["answer"]
