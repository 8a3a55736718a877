"""The orchestrator's embedded database: a store interface and its SQLite implementation."""
