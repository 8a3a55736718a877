"""An offline web for tests and `make eval`: pages served on 127.0.0.1 and Debian's real searx
over them with an offline sqlite FTS5 engine (shared by tests/e2e and bench/eval)."""
