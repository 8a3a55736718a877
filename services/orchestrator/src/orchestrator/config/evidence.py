"""What the model is given: the evidence's form and size, and the prompt's fixed reserves."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# Tokens of a synthesis prompt that are not evidence: instructions (~350), the history
# (3 turns of at most 900 characters, ~700), the question and the fences (~250), rounded up.
PROMPT_RESERVE_TOKENS = 1536
MIN_EVIDENCE_TOKENS = 512
# The part of PROMPT_RESERVE_TOKENS that counts on a short history; a longer history (up to
# ORCHESTRATOR_HISTORY_CHARS) takes its extra tokens from the evidence.
HISTORY_RESERVE_TOKENS = 700
# Characters per token when sizing text (the same estimate as core/ask/evidence.py).
CHARS_PER_TOKEN = 4


class EvidenceSettings(BaseModel):
    """Evidence given to the model (ORCHESTRATOR_EVIDENCE*, ORCHESTRATOR_PASSAGE_WORDS); a part
    of ``Settings``."""

    # passages: RankPassages (BM25 + dense, several per page, token budget) plus the best
    # snippets; chunk_per_url: one ~500-word chunk per URL by BM25, 8 at most, each cut to
    # 2,000 characters (the behaviour before passages; the eval baseline).
    evidence: Literal["passages", "chunk_per_url"] = "passages"
    # Tokens of evidence per prompt; 0 sizes it to the model: LLM_NUM_CTX - LLM_MAX_TOKENS -
    # the tokens kept for instructions, history and question (PROMPT_RESERVE_TOKENS).
    evidence_tokens: int = Field(default=0, ge=0, le=1_000_000)
    passage_words: int = Field(default=120, ge=16, le=2000)
    # Send each page to the ranker (PreparePassages) as soon as it is read, so its likely
    # passages are embedded while the other pages are still being read, off the path from
    # the last read to RankPassages.
    prepare_passages: bool = True
    # Search snippets kept as evidence beside the passages.
    evidence_snippets: int = Field(default=5, ge=0, le=50)
