-- Settings changed through PATCH /v1/settings (orchestrator/overrides.py): one row per setting,
-- its value as JSON. The environment stays the source of defaults; a row overrides one setting
-- until it is reset (deleted). Secrets are stored as given: the database file is as private as
-- the environment that holds the same keys.
CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at REAL NOT NULL,
    updated_by TEXT NOT NULL DEFAULT ''
);
