"""Render-tier cost per page beside a plain read, in the same run, through a real reader.

A loopback site serves three kinds of page: a plain article, a JS-only page (an empty root
filled by a script) and a single-page app (an empty root filled once a script's fetch() of
the text as JSON has come back). Reads alternate between them (one at a time, the render tier on
on-demand), so the load of the shared box falls on both alike. Prints p50/p95 read time for
each kind, the render's own time, and the browser's memory (PSS of its processes) after
each page, beside the reader process's peak resident memory; exits 1 when a render missed
its page's text.

Run: ``.venv/bin/python bench/render/bench_render.py [--pages N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import resource
import statistics
import sys
import time
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from quarry.v1 import reader_pb2, reader_pb2_grpc
from reader.config import Settings
from reader.server import ReaderServer, build_server

from services.reader.tests.jspages import (
    FERRY_FACT,
    TIDE_FACT,
    XHR_DATA,
    article_js,
    shell,
    xhr_shell,
)
from services.reader.tests.pages import ARTICLE, HttpServer, fixed

SITE = "127.0.0.3"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _site(pages: int) -> HttpServer:
    web = HttpServer({})
    web.bind = SITE
    web.routes["/app.js"] = fixed(article_js(), "application/javascript")
    web.routes["/spa.json"] = fixed(XHR_DATA)
    for n in range(pages):  # distinct URLs: the reader's cache stays out of it
        web.routes[f"/article{n}"] = fixed(ARTICLE)
        web.routes[f"/app{n}"] = fixed(shell("/app.js"))
        web.routes[f"/spa{n}"] = fixed(xhr_shell("/spa.json"))
    return web


async def _measure(server: ReaderServer, web: HttpServer, pages: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in ("plain", "js", "spa", "render", "mb")}
    out |= {"missed js": [], "missed spa": []}
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        read = reader_pb2_grpc.ReaderStub(channel).Read
        # Warm-up: the browser's first launch is not a page's cost.
        await read(reader_pb2.ReadRequest(url=web.url("/app0", SITE)), timeout=120)
        for n in range(1, pages):
            kinds = ((f"/article{n}", "plain"), (f"/app{n}", "js"), (f"/spa{n}", "spa"))
            for path, kind in kinds:
                t0 = time.perf_counter()
                reply = await read(reader_pb2.ReadRequest(url=web.url(path, SITE)), timeout=120)
                out[kind].append((time.perf_counter() - t0) * 1000)
                if kind != "plain" and server.renderer is not None:
                    fact = TIDE_FACT if kind == "js" else FERRY_FACT
                    out["render"].append(reply.render.ms)
                    out[f"missed {kind}"].append(float(fact not in reply.markdown))
                    out["mb"].append(server.renderer.memory_mb())
    return out


async def run(pages: int) -> int:
    """Serve the site, start a reader, measure, print; 1 if a render missed its text."""
    settings = Settings(
        port=0,
        workers=2,
        allowed_cidrs=(ipaddress.ip_network(f"{SITE}/32"),),
        cache_enabled=False,
        timeout_s=60,
        render_timeout_s=60,
    )
    web = _site(pages)
    server = build_server(settings)
    async with web:
        await server.start()
        try:
            got = await _measure(server, web, pages)
        finally:
            await server.stop(0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{len(got['plain'])} plain, {len(got['js'])} JS-only (a script writes the text) and "
        f"{len(got['spa'])} single-page-app pages (a script fetches it as JSON), alternating, "
        "one at a time"
    )
    print(f"  {'':36} {'p50 ms':>8} {'p95 ms':>8}")
    rows = (
        ("plain read (fetch + extract)", got["plain"]),
        ("JS-only read (plain, then render)", got["js"]),
        ("single-page app (plain, then render)", got["spa"]),
        ("  of which the render (both kinds)", got["render"]),
    )
    for name, values in rows:
        print(f"  {name:36} {_pct(values, 0.5):8.0f} {_pct(values, 0.95):8.0f}")
    print(
        f"browser memory (PSS of its processes) after each page: median "
        f"{statistics.median(got['mb']):.0f} MiB, max {max(got['mb']):.0f} MiB; "
        f"reader process peak RSS {peak:.0f} MiB"
    )
    missed_js, missed_spa = int(sum(got["missed js"])), int(sum(got["missed spa"]))
    print(f"pages whose text the render missed: JS-only {missed_js}, single-page app {missed_spa}")
    missed = missed_js + missed_spa
    return 1 if missed else 0


def main() -> int:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=21)
    args = parser.parse_args()
    return asyncio.run(run(args.pages))


if __name__ == "__main__":
    raise SystemExit(main())
