"""Reader settings, read from `READER_*` environment variables."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict
from quarry_common.settings import BaseServiceSettings, Port

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_USER_AGENT = "QuarryReader/0.1 (+self-hosted answer engine)"


def _default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


class Settings(BaseServiceSettings):
    """Reader configuration; built once in ``main()`` and passed down."""

    model_config = SettingsConfigDict(
        env_prefix="READER_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    port: Port = 50051
    # Network policy: private/loopback/CGNAT ranges are refused unless allowed here.
    allow_private_networks: bool = False
    # Comma-separated CIDRs that are always reachable (e.g. "127.0.0.1/32,10.1.0.0/16").
    allowed_cidrs: Annotated[tuple[IPNetwork, ...], NoDecode] = ()
    max_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    timeout_s: float = Field(default=8.0, gt=0, le=120)
    max_redirects: int = Field(default=5, ge=0, le=20)
    user_agent: str = Field(default=DEFAULT_USER_AGENT, min_length=1, max_length=256)
    # Extraction worker processes; 0 means one per available core.
    workers: int = Field(default=0, ge=0, le=64)
    extract_timeout_s: float = Field(default=6.0, gt=0, le=120)
    # Extractions allowed to wait for a worker beyond those running; more fail fast.
    queue_size: int = Field(default=32, ge=0, le=10_000)
    # Hostile PDFs: pages extracted per PDF, and time per PDF (the rest is cut, text kept).
    pdf_max_pages: int = Field(default=100, ge=1, le=100_000)
    pdf_timeout_s: float = Field(default=3.0, gt=0, le=120)
    # A worker above this resident memory after a page is replaced (it keeps the page's memory).
    recycle_rss_mb: int = Field(default=250, ge=0, le=65536)
    cache_enabled: bool = True
    cache_ttl_s: float = Field(default=600.0, ge=0)
    cache_size: int = Field(default=256, ge=1, le=100_000)
    # The rendering tier (headless Chromium): off, on-demand (JS shells only) or always.
    render: Literal["off", "on-demand", "always"] = "on-demand"
    render_timeout_s: float = Field(default=6.0, gt=0, le=120)
    render_concurrency: int = Field(default=1, ge=1, le=16)
    render_max_requests: int = Field(default=64, ge=1, le=10_000)
    render_max_bytes: int = Field(default=8 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    render_settle_s: float = Field(default=1.0, ge=0, le=30)
    render_recycle_pages: int = Field(default=50, ge=1, le=100_000)
    render_max_rss_mb: int = Field(default=1024, ge=0, le=65536)
    render_heap_mb: int = Field(default=256, ge=16, le=8192)
    # Chromium's executable; empty: `chromium` (Debian) or `chromium-browser` on PATH.
    chromium_path: str = ""
    # Where the per-domain reading memory is saved (domains.sqlite); unset: memory only.
    data_dir: Path | None = None
    domain_memory_size: int = Field(default=2000, ge=1, le=1_000_000)

    @field_validator("allowed_cidrs", mode="before")
    @classmethod
    def _split_cidrs(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(
                ipaddress.ip_network(part.strip(), strict=False)
                for part in value.split(",")
                if part.strip()
            )
        return value

    @property
    def worker_count(self) -> int:
        """Worker processes to run: ``workers``, or the available cores when 0."""
        return self.workers or _default_workers()
