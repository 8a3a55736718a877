"""The orchestrator's embedded SQLite storage (under ``ORCHESTRATOR_DATA_DIR``)."""
