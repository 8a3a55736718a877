"""The core: use cases and domain rules; imports no transport (import-linter checks it)."""
