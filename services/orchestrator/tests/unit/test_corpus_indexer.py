"""The indexer against the corpus and Extract doubles over real gRPC: a generated folder of
hundreds of mixed files with broken ones, refreshed incrementally."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from orchestrator.adapters.corpus.indexer import Counts, FolderMissing, Indexer
from orchestrator.adapters.corpus.scan import doc_id
from orchestrator.adapters.grpc.corpus import CorpusClient, Extractor
from quarry.v1 import reader_pb2

from services.orchestrator.tests.unit.corpus_doubles import (
    Ctx,
    FakeCorpusRanker,
    FakeExtractReader,
)
from services.orchestrator.tests.unit.doubles import grpc_server

GOOD = 300


@dataclass
class Env:
    indexer: Indexer
    ranker: FakeCorpusRanker
    reader: FakeExtractReader
    root: Path


def make_corpus(root: Path, n: int = GOOD) -> None:
    """``n`` good files (md/txt/html in turn) plus broken and unsupported ones."""
    for i in range(n):
        folder = root / f"topic{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        kind = ("md", "txt", "html")[i % 3]
        text = f"Document {i} talks about subject{i} and shared words."
        if kind == "html":
            body = f"<html><head><title>Doc {i}</title></head><body><p>{text}</p></body></html>"
        elif kind == "md":
            body = f"# Doc {i}\n\n{text}\n"
        else:
            body = text
        (folder / f"doc{i}.{kind}").write_text(body)
    (root / "junk.md").write_bytes(b"\x00\x01\x02binary junk" * 50)
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    (root / "empty.txt").write_text("   \n")
    (root / "picture.png").write_bytes(b"\x89PNG")
    (root / "notes.docx").write_bytes(b"PK")
    os.mkfifo(root / "pipe.md")
    (root / "folder.md").mkdir()


@pytest_asyncio.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    async with indexer_env(tmp_path, FakeExtractReader()) as made:
        yield made


@asynccontextmanager
async def indexer_env(
    tmp_path: Path, reader: FakeExtractReader, retry_delay_s: float = 0.5
) -> AsyncIterator[Env]:
    """The indexer over real gRPC to a fake index and ``reader``."""
    ranker = FakeCorpusRanker()
    async with AsyncExitStack() as stack:
        channels = []
        for servicer in (ranker, reader):
            server = grpc_server(servicer)
            port = await server.start()
            stack.push_async_callback(server.stop, 0)
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
            stack.push_async_callback(channel.close)
            channels.append(channel)
        corpus = CorpusClient(channels[0], limit=asyncio.Semaphore(4))
        indexer = Indexer(
            corpus,
            Extractor(channels[1]),
            max_file_bytes=64 * 1024,
            concurrency=4,
            retry_delay_s=retry_delay_s,
        )
        root = tmp_path / "corpus"
        root.mkdir()
        yield Env(indexer, ranker, reader, root)


def _ids(env: Env, *names: str) -> set[str]:
    return {doc_id(str(env.root / n)) for n in names}


async def test_first_refresh_indexes_good_files_and_counts_the_rest(env: Env) -> None:
    make_corpus(env.root)
    seen: list[Counts] = []
    result = await env.indexer.refresh(str(env.root), lambda c: seen.append(Counts(**c.as_dict())))
    c = result.counts
    assert result.status == "ok"
    assert (c.added, c.updated, c.removed, c.unchanged) == (GOOD, 0, 0, 0)
    assert c.failed == 3  # junk.md, broken.pdf, empty.txt
    assert c.skipped == 3  # picture.png, notes.docx, pipe.md (not a regular file)
    assert c.total == GOOD + 3
    assert c.done == c.total
    assert len(env.ranker.corpus.committed) == GOOD
    assert env.ranker.corpus.commits == 1
    assert seen[-1].done == c.total
    assert [s.done for s in seen] == sorted(s.done for s in seen)
    doc = env.ranker.corpus.committed[doc_id(str(env.root / "topic0" / "doc0.md"))]
    assert (doc.title, doc.kind) == ("Doc 0", "markdown")
    assert "subject0" in doc.markdown
    html = env.ranker.corpus.committed[doc_id(str(env.root / "topic2" / "doc2.html"))]
    assert (html.title, html.kind) == ("Doc 2", "html")
    txt = env.ranker.corpus.committed[doc_id(str(env.root / "topic1" / "doc1.txt"))]
    assert txt.title == "doc1.txt"


async def test_incremental_refresh_changes_exactly_what_changed(env: Env) -> None:
    make_corpus(env.root)
    await env.indexer.refresh(str(env.root))
    env.reader.extracted.clear()
    env.ranker.corpus.upserted.clear()
    (env.root / "topic3" / "doc3.md").write_text("# Doc 3\n\nRewritten with newword.\n")
    (env.root / "topic4" / "doc4.txt").unlink()
    (env.root / "new").mkdir()
    (env.root / "new" / "fresh.md").write_text("# Fresh\n\nA brand new note.\n")
    touched = env.root / "topic5" / "doc5.html"
    os.utime(touched, ns=(1, 1))  # same bytes, new mtime: re-hashed, not re-extracted
    result = await env.indexer.refresh(str(env.root))
    c = result.counts
    assert (c.added, c.updated, c.removed) == (1, 1, 1)
    assert c.unchanged == GOOD - 2
    assert set(env.reader.extracted) == _ids(env, "topic3/doc3.md", "new/fresh.md") | _ids(
        env, "junk.md", "broken.pdf"
    )
    assert set(env.ranker.corpus.upserted) == _ids(
        env, "topic3/doc3.md", "new/fresh.md", "topic5/doc5.html"
    )
    assert env.ranker.corpus.removed == [doc_id(str(env.root / "topic4" / "doc4.txt"))]
    committed = env.ranker.corpus.committed
    assert len(committed) == GOOD
    assert "newword" in committed[doc_id(str(env.root / "topic3" / "doc3.md"))].markdown
    assert committed[doc_id(str(touched))].mtime_ns == 1


async def test_a_second_run_without_changes_extracts_and_commits_nothing(env: Env) -> None:
    make_corpus(env.root)
    await env.indexer.refresh(str(env.root))
    env.reader.extracted.clear()
    result = await env.indexer.refresh(str(env.root))
    assert result.counts.unchanged == GOOD
    assert (result.counts.added, result.counts.updated, result.counts.removed) == (0, 0, 0)
    # Only the broken files are tried again (they may have been fixed meanwhile).
    assert set(env.reader.extracted) == _ids(env, "junk.md", "broken.pdf")
    assert env.ranker.corpus.commits == 1


async def test_a_folder_that_vanishes_mid_run_commits_nothing_and_removes_nothing(
    env: Env,
) -> None:
    make_corpus(env.root, 30)
    await env.indexer.refresh(str(env.root))
    before = dict(env.ranker.corpus.committed)
    (env.root / "topic0" / "doc0.md").write_text("# Doc 0\n\nchanged\n")

    def vanish(counts: Counts) -> None:
        if counts.done > counts.unchanged and env.root.exists():
            env.root.rename(env.root.with_name("moved"))

    result = await env.indexer.refresh(str(env.root), vanish)
    assert result.status == "aborted"
    assert "disappeared" in result.error
    assert env.ranker.corpus.removed == []
    assert env.ranker.corpus.commits == 1
    assert env.ranker.corpus.committed == before


async def test_a_missing_folder_is_refused_before_anything_happens(env: Env) -> None:
    with pytest.raises(FolderMissing):
        await env.indexer.refresh(str(env.root / "nope"))
    assert env.ranker.corpus.calls == []


async def test_batches_stay_within_the_ranker_limit(env: Env) -> None:
    for i in range(1100):
        (env.root / f"n{i}.txt").write_text(f"note {i}")
    result = await env.indexer.refresh(str(env.root))
    assert result.counts.added == 1100
    assert env.ranker.corpus.calls.count("IndexDocuments") >= 3  # 1100 / 512
    assert env.ranker.corpus.calls.count("CommitCorpus") == 1


async def test_changes_left_staged_by_a_stopped_run_are_committed_by_the_next(env: Env) -> None:
    make_corpus(env.root, 12)
    await env.indexer.refresh(str(env.root))
    (env.root / "topic0" / "doc0.md").write_text("# Doc 0\n\nchanged before the folder moved\n")

    def vanish(counts: Counts) -> None:
        if counts.done > counts.unchanged and env.root.exists():
            env.root.rename(env.root.with_name("moved"))

    assert (await env.indexer.refresh(str(env.root), vanish)).status == "aborted"
    env.root.with_name("moved").rename(env.root)
    # Touched too: same bytes as staged, but the committed copy is the old text, not reusable.
    os.utime(env.root / "topic0" / "doc0.md", ns=(7, 7))
    result = await env.indexer.refresh(str(env.root))
    assert (result.status, result.counts.updated) == ("ok", 1)
    assert env.ranker.corpus.commits == 2
    doc = env.ranker.corpus.committed[doc_id(str(env.root / "topic0" / "doc0.md"))]
    assert "changed before" in doc.markdown


async def test_a_full_staging_area_is_committed_and_the_run_goes_on(env: Env) -> None:
    for i in range(600):
        (env.root / f"n{i}.txt").write_text(f"note {i} " + "x" * 100)
    env.ranker.corpus.max_staged_chars = 60_000  # one batch of 512 fits, not the whole run
    result = await env.indexer.refresh(str(env.root))
    assert (result.status, result.counts.added) == ("ok", 600)
    assert env.ranker.corpus.commits == 2  # one forced by the bound, one at the end
    assert len(env.ranker.corpus.committed) == 600


class FlakyReader(FakeExtractReader):
    """Answers the first ``down`` extractions with ``code``, as a reader that is restarting."""

    def __init__(self, down: int, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE) -> None:
        super().__init__()
        self.down, self.code, self.tries = down, code, 0

    async def Extract(
        self, request: reader_pb2.ExtractRequest, context: Ctx
    ) -> reader_pb2.ReadResponse:
        self.tries += 1
        if self.tries <= self.down:
            await context.abort(self.code, "restarting")
        return await super().Extract(request, context)


@pytest.mark.parametrize(
    ("down", "code", "status", "calls"),
    [
        (2, grpc.StatusCode.UNAVAILABLE, "ok", 3),  # two transient failures, then indexed
        (9, grpc.StatusCode.UNAVAILABLE, "aborted", 3),  # EXTRACT_ATTEMPTS, then the run stops
        (9, grpc.StatusCode.INVALID_ARGUMENT, "ok", 1),  # a refusal is final at once
    ],
)
async def test_extraction_retries_transient_failures_only(
    tmp_path: Path, down: int, code: grpc.StatusCode, status: str, calls: int
) -> None:
    reader = FlakyReader(down, code)
    async with indexer_env(tmp_path, reader, retry_delay_s=0.01) as made:
        (made.root / "a.md").write_text("# A\n\nAlpha.\n")
        result = await made.indexer.refresh(str(made.root))
    assert (result.status, reader.tries) == (status, calls)
    if status == "aborted":
        assert "the reader is unavailable (UNAVAILABLE)" in (result.error or "")
    elif code == grpc.StatusCode.INVALID_ARGUMENT:
        assert result.counts.failed == 1
    else:
        assert result.counts.added == 1
