-- Twin of migrations/0006_settings.sql: settings changed through PATCH /v1/settings, one row per
-- setting, its value as JSON text. (The settings store itself is SQLite or memory for now: on
-- PostgreSQL each replica keeps its own overrides; see docs/scaling.md.)
CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    updated_by TEXT NOT NULL DEFAULT ''
);
