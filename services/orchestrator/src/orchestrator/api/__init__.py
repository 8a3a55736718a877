"""The faces: HTTP, OpenAI-compatible, MCP and the web UI; each calls the core's use cases."""
