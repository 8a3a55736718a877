"""A TCP forwarder for stand-in containers: ``forward.py LISTEN_PORT TARGET_HOST:TARGET_PORT``.

``forward.py check URL`` exits 0 when GET URL answers 200 (their health check and ollama-pull;
one argument per word, because Podman's Docker API re-splits health-check arguments on spaces).

tests/containers/compose.standins.yaml runs it in place of SearXNG and Ollama (whose images need
a registry), forwarding to the scripted fakes on the host, so the rest of compose.yaml runs as
written: SEARXNG_URL=http://searxng:8080, LLM_BASE_URL=http://ollama:11434.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import urllib.request


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    finally:
        with contextlib.suppress(Exception):
            dst.close()


async def main(listen_port: int, target: str) -> None:
    """Accept on 0.0.0.0:``listen_port`` and pipe each connection to ``target``."""
    host, _, port = target.rpartition(":")

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(
            _pipe(reader, up_writer), _pipe(up_reader, writer), return_exceptions=True
        )

    server = await asyncio.start_server(accept, "0.0.0.0", listen_port)
    async with server:
        await server.serve_forever()


def check(url: str) -> int:
    """0 when GET ``url`` answers 200, else 1."""
    try:
        with urllib.request.urlopen(url, timeout=3) as reply:
            return 0 if reply.status == 200 else 1
    except OSError as err:
        sys.stderr.write(f"{url}: {err}\n")
        return 1


if __name__ == "__main__":
    if sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
