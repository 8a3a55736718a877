-- Twin of migrations/0007_schedules.sql. Scheduled research (orchestrator/core/schedules/,
-- docs/schedules.md): a saved question, when it runs, its webhook, the run going now and the last
-- one's outcome. The scheduler changes a row only with conditional UPDATEs (next_run_at /
-- pending_run_id as read), so of several replicas only one fires or finishes a given run.
-- webhook_secret signs deliveries; the API never shows it.
CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    query TEXT NOT NULL,
    mode TEXT NOT NULL,
    sources TEXT,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    next_run_at DOUBLE PRECISION,
    webhook_url TEXT,
    webhook_secret TEXT,
    pending_run_id TEXT,
    pending_since DOUBLE PRECISION,
    last_run_id TEXT,
    last_run_at DOUBLE PRECISION,
    last_status TEXT,
    last_error TEXT,
    last_changes TEXT,
    baseline TEXT,
    runs INTEGER NOT NULL DEFAULT 0,
    notified_at DOUBLE PRECISION
);
CREATE INDEX schedules_owner ON schedules (owner, created_at);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE paused = 0;
