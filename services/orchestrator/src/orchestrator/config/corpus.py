"""Local documents: CORPUS_DIR, the folders refreshes may index, and uploads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Self

from pydantic import BaseModel, Field, field_validator, model_validator

from orchestrator.config.checks import absolute_dir, within


class CorpusSettings(BaseModel):
    """Local documents (CORPUS_DIR, ORCHESTRATOR_CORPUS_*, ORCHESTRATOR_UPLOAD_*); a part of
    ``Settings``."""

    corpus_dir: str = Field(default="", validation_alias="CORPUS_DIR")
    corpus_rescan_s: float = Field(default=0.0, ge=0, le=7 * 86400)
    # Files above this are skipped (and counted); the reader caps extraction at 2 MiB by default.
    corpus_max_file_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    corpus_concurrency: int = Field(default=4, ge=1, le=32)
    # Allow refreshing any absolute path over HTTP, not only CORPUS_DIR (make run: same user).
    corpus_allow_any_path: bool = False
    # Corpus hits asked for per search round.
    corpus_top_k: int = Field(default=10, ge=1, le=50)
    # Folders besides CORPUS_DIR that refreshes may index (comma-separated absolute paths).
    corpus_roots: str = ""
    # Honour a refresh request's "allow_outside": true (its client asked the user) for folders
    # outside CORPUS_DIR and ORCHESTRATOR_CORPUS_ROOTS. make run sets it (same user, same host).
    corpus_allow_outside: bool = False
    # Uploads (POST /v1/corpus/files, the web UI): where they are kept, one folder per user;
    # empty turns uploads off. Must not be inside CORPUS_DIR or a corpus root (nor hold one).
    upload_dir: str = ""
    # Per file (the reader extracts at most READER_MAX_BYTES: raise both together).
    upload_max_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    upload_max_files: int = Field(default=20, ge=1, le=1000)  # per request
    upload_max_documents: int = Field(default=500, ge=1, le=100_000)  # kept per user

    @field_validator("corpus_roots")
    @classmethod
    def _roots(cls, value: str) -> str:
        roots = [r.strip() for r in value.split(",") if r.strip()]
        if any(not Path(r).is_absolute() for r in roots):
            raise ValueError("every root must be an absolute path")
        return ",".join(os.path.normpath(r) for r in roots)

    @field_validator("corpus_dir", "upload_dir")
    @classmethod
    def _absolute_corpus_dirs(cls, value: str) -> str:
        return absolute_dir(value)

    @model_validator(mode="after")
    def _uploads_apart(self) -> Self:
        # Uploads are private to their owner only while no shared folder holds them (or is
        # held by them): the index tells users apart by where a document's path starts.
        up = self.upload_dir
        for root in self.corpus_root_list() if up else ():
            if within(up, root) or within(root, up):
                raise ValueError(
                    f"ORCHESTRATOR_UPLOAD_DIR {up!r} and the corpus root {root!r} must not "
                    "contain one another"
                )
        return self

    def corpus_root_list(self) -> tuple[str, ...]:
        """CORPUS_DIR and ORCHESTRATOR_CORPUS_ROOTS: the folders refreshes may index."""
        extra = [r for r in self.corpus_roots.split(",") if r]
        return tuple(dict.fromkeys(([self.corpus_dir] if self.corpus_dir else []) + extra))
