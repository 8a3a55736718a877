"""Quarry as an MCP server: tools `search`, `research`, `index` and session resources."""
