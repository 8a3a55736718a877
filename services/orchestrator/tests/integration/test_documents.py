"""Documents you can see, remove and pin, over the real HTTP API with the real reader and index:
the list, a question pinned to a folder or file, a PDF cited by its page, removal, uploads and
every refused upload leaving nothing behind, and uploads private to the user who sent them."""

from __future__ import annotations

import asyncio
import json
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import AnyUrl

from services.orchestrator.tests.integration.corpus_support import corpus_world
from services.orchestrator.tests.integration.documents_support import (
    multipart,
    paged_pdf,
    pdf_bomb,
    zip_bomb,
)
from services.orchestrator.tests.integration.support import (
    Stack,
    World,
    of,
    serve_http,
    stack,
)
from services.orchestrator.tests.integration.test_mcp import (
    QUARRY,
    _text,
    http_session,
    stdio_session,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
__all__ = ["corpus_world"]

ALICE, BOB = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef"
LOCAL = {"sources": ["local"]}


def notes(root: Path) -> Path:
    """A folder: a note at the top, one in a subfolder, a three-page PDF."""
    (root / "sub").mkdir(parents=True)
    (root / "harbour.md").write_text("# Harbour\n\nThe ferry leaves the harbour at 07:40.\n")
    island = "# Island\n\nThe ferry leaves the island harbour at 09:15.\n"
    (root / "sub" / "ferry.md").write_text(island)
    pages = [
        ["Annual report of the lighthouse trust."],
        [],
        ["The ferry pier was rebuilt in 1987."],
    ]
    (root / "report.pdf").write_bytes(paged_pdf(pages, title="Lighthouse report"))
    return root


async def refresh(s: Stack) -> None:
    reply = await s.client.post(
        "/v1/corpus/refresh", json={}, headers={"Accept": "application/json"}
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "ok", reply.text


def sources(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = of(events, "sources")[-1]["sources"]
    return found


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())


async def upload(s: Stack, files: list[tuple[str, bytes]], token: str = "", **headers: str) -> Any:
    body, ctype = multipart(files)
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    return await s.client.post(
        "/v1/corpus/files", content=body, headers={"Content-Type": ctype, **auth, **headers}
    )


@asynccontextmanager
async def documents(world: World, tmp_path: Path) -> AsyncIterator[tuple[Stack, Path, Path]]:
    """The app over ``world`` with the notes indexed and an upload folder."""
    root = notes(tmp_path / "notes")
    uploads = tmp_path / "uploads"
    async with stack(world, corpus_dir=str(root), upload_dir=str(uploads)) as s:
        await refresh(s)
        yield s, root, uploads


async def test_list_pin_and_cite_a_pdf_page(corpus_world: World, tmp_path: Path) -> None:
    async with documents(corpus_world, tmp_path) as (s, root, _):
        reply = await s.client.get("/v1/corpus/documents", params={"under": str(root)})
        assert reply.status_code == 200, reply.text
        page = reply.json()
        listed = {Path(d["path"]).name: d for d in page["documents"]}
        assert page["total"] == 3
        assert set(listed) == {"harbour.md", "ferry.md", "report.pdf"}
        pdf = listed["report.pdf"]
        assert pdf["type"] == "pdf"
        assert pdf["pages"] == 3
        assert pdf["passages"] >= 2
        assert pdf["indexed_at"].endswith("Z")
        assert pdf["size"] > 0
        assert not pdf["uploaded"]
        first = await s.client.get("/v1/corpus/documents", params={"limit": 1, "offset": 1})
        assert [d["path"] for d in first.json()["documents"]] == [sorted(listed_paths(page))[1]]

        question = "ferry leaves harbour"
        pinned = await s.ask(question, options={"scope": str(root / "sub")})
        assert [x["url"] for x in sources(pinned)] == [f"local:{root}/sub/ferry.md"]
        unpinned = await s.ask(question, options=LOCAL)
        assert f"local:{root}/harbour.md" in [x["url"] for x in sources(unpinned)]

        cited = await s.ask("ferry pier rebuilt", options={"scope": str(root / "report.pdf")})
        (src,) = sources(cited)
        assert src["url"] == f"local:{root}/report.pdf"
        assert src["pages"] == [3]
        assert "1987" in " ".join(src["passages"])


def listed_paths(page: dict[str, Any]) -> list[str]:
    return [d["path"] for d in page["documents"]]


@pytest.mark.parametrize(
    ("scope", "extra"),
    [
        ("relative/path", {}),
        ("/nowhere/at/all", {}),
        ("SUB", {"sources": ["web"]}),
        ("x" * 5000, {}),
    ],
)
async def test_a_bad_scope_is_a_422_problem(
    corpus_world: World, tmp_path: Path, scope: str, extra: dict[str, Any]
) -> None:
    async with documents(corpus_world, tmp_path) as (s, root, _):
        scope = str(root / "sub") if scope == "SUB" else scope
        reply = await s.client.post(
            "/v1/search",
            json={"query": "ferry", "options": {"scope": scope, **extra}},
            headers={"Accept": "application/json"},
        )
        assert reply.status_code == 422, reply.text
        assert reply.headers["content-type"].startswith("application/problem+json")


async def test_remove_a_document_and_an_unknown_one(corpus_world: World, tmp_path: Path) -> None:
    async with documents(corpus_world, tmp_path) as (s, root, _):
        doc = f"local:{root}/harbour.md"
        gone = await s.client.delete(f"/v1/corpus/documents/{doc}")
        assert gone.status_code == 200, gone.text
        assert gone.json()["file_deleted"] is False
        assert (root / "harbour.md").exists()  # a watched folder's file is never deleted
        left = await s.client.get("/v1/corpus/documents", params={"under": str(root)})
        assert doc not in [d["id"] for d in left.json()["documents"]]
        missing = await s.client.delete(f"/v1/corpus/documents/{doc}")
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("application/problem+json")


async def test_an_upload_is_answerable_listed_and_removable(
    corpus_world: World,
    tmp_path: Path,
) -> None:
    async with documents(corpus_world, tmp_path) as (s, _, uploads):
        note = b"# Boathouse\n\nThe boathouse key hangs behind the blue door.\n"
        reply = await upload(
            s, [("boathouse.md", note), ("manual.pdf", paged_pdf([["Oar care."]]))]
        )
        assert reply.status_code == 201, reply.text
        kept = reply.json()["files"]
        assert [f["name"] for f in kept] == ["boathouse.md", "manual.pdf"]
        assert files_under(uploads) == ["local/boathouse.md", "local/manual.pdf"]
        answered = await s.ask("boathouse key blue door", options=LOCAL)
        assert kept[0]["id"] in [x["url"] for x in sources(answered)]
        listed = (await s.client.get("/v1/corpus/documents", params={"limit": 100})).json()
        mine = [d for d in listed["documents"] if d["uploaded"]]
        assert {d["path"] for d in mine} == {
            str(uploads / "local" / n) for n in ("boathouse.md", "manual.pdf")
        }
        gone = await s.client.delete(f"/v1/corpus/documents/{kept[0]['id']}")
        assert gone.status_code == 200
        assert gone.json()["file_deleted"] is True
        assert files_under(uploads) == ["local/manual.pdf"]


TWO_GB = 2 * 1024**3


@pytest.mark.parametrize(
    ("files", "status", "code"),
    [
        ([("../../evil.md", b"# evil\n")], 422, "bad_file_name"),
        ([("sub/evil.md", b"# evil\n")], 422, "bad_file_name"),
        ([(".hidden.md", b"# evil\n")], 422, "bad_file_name"),
        ([("tool.exe", b"MZ\x90\x00")], 415, "unsupported_type"),
        ([("bomb.zip", b"ZIP")], 415, "unsupported_type"),
        ([("bomb.txt", b"ZIP")], 415, "unsupported_type"),
        ([("fake.pdf", b"hello, not a pdf")], 415, "unsupported_type"),
        ([("bomb.pdf", b"PDFBOMB")], 422, "not_extractable"),
        ([("ok.md", b"# fine\n\nA fine note.\n"), ("bad.exe", b"MZ")], 415, "unsupported_type"),
        ([("big.txt", b"a" * (2 * 1024 * 1024 + 1))], 413, "file_too_large"),
    ],
)
async def test_refused_uploads_leave_nothing_behind(
    corpus_world: World, tmp_path: Path, files: list[tuple[str, bytes]], status: int, code: str
) -> None:
    async with documents(corpus_world, tmp_path) as (s, _, uploads):
        stand_in = {b"ZIP": zip_bomb, b"PDFBOMB": pdf_bomb}
        files = [(n, stand_in[d]() if d in stand_in else d) for n, d in files]
        reply = await upload(s, files)
        assert reply.status_code == status, reply.text
        assert reply.headers["content-type"].startswith("application/problem+json")
        assert reply.json()["code"] == code
        assert files_under(uploads) == []
        assert not list((uploads / ".incoming").iterdir())


async def test_a_2gb_body_is_refused_unread(corpus_world: World, tmp_path: Path) -> None:
    async with documents(corpus_world, tmp_path) as (s, _, uploads):
        body, ctype = multipart([("huge.txt", b"")])
        sent = 0

        async def endless() -> AsyncIterator[bytes]:
            nonlocal sent
            head = body[: body.index(b"\r\n\r\n") + 4]
            yield head
            block = b"a" * (1 << 20)
            while sent < TWO_GB:
                sent += len(block)
                yield block

        reply = await s.client.post(
            "/v1/corpus/files", content=endless(), headers={"Content-Type": ctype}
        )
        assert reply.status_code == 413, reply.text
        assert sent < 8 * 1024 * 1024  # refused at the 2 MiB limit, not after reading 2 GB
        assert files_under(uploads) == []
        declared = await s.client.post(
            "/v1/corpus/files",
            content=b"",
            headers={"Content-Type": ctype, "Content-Length": str(TWO_GB)},
        )
        assert declared.status_code == 413


@pytest.mark.parametrize(
    ("headers", "status"),
    [({"Content-Encoding": "gzip"}, 415), ({"Content-Type": "application/json"}, 415)],
)
async def test_uploads_only_take_plain_multipart(
    corpus_world: World, tmp_path: Path, headers: dict[str, str], status: int
) -> None:
    async with documents(corpus_world, tmp_path) as (s, _, uploads):
        body, ctype = multipart([("a.md", b"# a\n")])
        reply = await s.client.post(
            "/v1/corpus/files", content=body, headers={"Content-Type": ctype, **headers}
        )
        assert reply.status_code == status, reply.text
        assert files_under(uploads) == []


async def test_uploads_are_private_to_their_user(corpus_world: Any, tmp_path: Path) -> None:
    root = notes(tmp_path / "notes")
    uploads = tmp_path / "uploads"
    tokens = f"alice:{ALICE},bob:{BOB}"
    async with stack(
        corpus_world, corpus_dir=str(root), upload_dir=str(uploads), api_tokens=tokens
    ) as s:
        a, b = {"Authorization": f"Bearer {ALICE}"}, {"Authorization": f"Bearer {BOB}"}
        await s.client.post(
            "/v1/corpus/refresh", json={}, headers={"Accept": "application/json", **a}
        )
        note = b"# Diary\n\nAlice's locker combination is 3-14-15.\n"
        kept = await upload(s, [("diary.md", note)], token=ALICE)
        assert kept.status_code == 201, kept.text
        doc = kept.json()["files"][0]["id"]
        assert doc.startswith(f"local:{uploads}/alice/")

        def ids(reply: Any) -> list[str]:
            return [d["id"] for d in reply.json()["documents"]]

        assert doc in ids(await s.client.get("/v1/corpus/documents", headers=a))
        bobs = ids(await s.client.get("/v1/corpus/documents", headers=b))
        assert doc not in bobs
        assert f"local:{root}/harbour.md" in bobs
        body = {"query": "what is the locker combination", "options": LOCAL}
        reply = await s.client.post(
            "/v1/search", json=body, headers={"Accept": "application/json", **b}
        )
        assert doc not in [x["url"] for x in reply.json()["sources"]]
        pin = {"query": "locker", "options": {"scope": doc}}
        refused = await s.client.post(
            "/v1/search", json=pin, headers={"Accept": "application/json", **b}
        )
        assert refused.status_code == 422
        assert (await s.client.delete(f"/v1/corpus/documents/{doc}", headers=b)).status_code == 404
        assert Path(doc.removeprefix("local:")).exists()  # noqa: ASYNC240


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_mcp_lists_documents_and_pins_a_search(
    corpus_world: World, tmp_path: Path, transport: str
) -> None:
    opener = http_session if transport == "http" else stdio_session
    async with (
        documents(corpus_world, tmp_path) as (s, root, _),
        serve_http(s.app) as base,
        opener(base) as session,
    ):
        listing = await session.read_resource(AnyUrl("quarry://documents"))
        table = "\n".join(getattr(c, "text", "") for c in listing.contents)
        pinned = await session.call_tool(
            "search", {"query": "ferry pier rebuilt", "scope": str(root / "report.pdf")}
        )
        wrong = await session.call_tool("search", {"query": "ferry", "scope": "/nowhere"})
    assert f"| {root}/report.pdf | pdf |" in table
    assert f"| {root}/sub/ferry.md | markdown |" in table
    assert not pinned.isError, _text(pinned)
    assert f"local:{root}/report.pdf (p. 3)" in _text(pinned)
    assert "harbour.md" not in _text(pinned)
    assert wrong.isError
    assert "scope" in _text(wrong)


async def quarry(base: str, *args: str) -> tuple[int, str, str]:
    """The real `quarry` CLI against ``base``: exit status, stdout, stderr."""
    proc = await asyncio.create_subprocess_exec(
        QUARRY, "--url", base, *args, stdout=PIPE, stderr=PIPE
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_cli_lists_pins_and_removes(corpus_world: World, tmp_path: Path) -> None:
    async with (
        documents(corpus_world, tmp_path) as (s, root, _),
        serve_http(s.app) as base,
    ):
        listed = await quarry(base, "docs", str(root))
        pinned = await quarry(
            base, "ask", "-q", "ferry pier rebuilt", "--scope", str(root / "report.pdf")
        )
        wrong = await quarry(base, "ask", "-q", "ferry", "--scope", "/nowhere")
        removed = await quarry(base, "docs", "--remove", str(root / "harbour.md"))
        after = await quarry(base, "docs", "--json", str(root))
    assert listed[0] == 0, listed
    assert f"{root}/report.pdf\n    pdf, " in listed[1]
    assert "3 passages" in listed[1] or "passages, 3 pages" in listed[1]
    assert "3 of 3 documents" in listed[1]
    assert pinned[0] == 0, pinned
    assert f"local:{root}/report.pdf (p. 3)" in pinned[1]
    assert "harbour.md" not in pinned[1]
    assert wrong[0] == 2
    assert "scope" in wrong[2]
    assert removed == (0, f"removed {root}/harbour.md\n", "")
    paths = [d["path"] for d in json.loads(after[1])["documents"]]
    assert paths == [f"{root}/report.pdf", f"{root}/sub/ferry.md"]


async def test_openai_extra_body_pins_the_question(corpus_world: World, tmp_path: Path) -> None:
    async with documents(corpus_world, tmp_path) as (s, root, _):
        asked = {
            "model": "quarry-search",
            "messages": [{"role": "user", "content": "ferry pier rebuilt"}],
            "options": {"scope": str(root / "report.pdf")},
        }
        reply = await s.client.post("/v1/chat/completions", json=asked)
        wrong = await s.client.post(
            "/v1/chat/completions", json={**asked, "options": {"scope": "/nowhere"}}
        )
    assert reply.status_code == 200, reply.text
    (src,) = reply.json()["sources"]
    assert src["url"] == f"local:{root}/report.pdf"
    assert src["pages"] == [3]
    assert wrong.status_code == 422, wrong.text
    assert "scope" in wrong.json()["error"]["message"]
