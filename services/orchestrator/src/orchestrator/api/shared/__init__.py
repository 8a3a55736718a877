"""What every face served over HTTP shares, and no face owns: problem+json and the OpenAI error
shape (problems.py), SSE/NDJSON framing (sse.py) and streaming (streaming.py), the token check
and host guards (security.py), rate limits (ratelimit.py), the run options a request may carry
(options.py) and the FastAPI dependencies for the runtime and the caller (deps.py).

The faces (http/, openai/, mcp/, web/) import this and never each other (an import-linter
contract in pyproject.toml); this imports no face.
"""
