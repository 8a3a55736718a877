-- Deep-research runs: one row per run (its state as JSON), and every event it emitted.
CREATE TABLE research_runs (
    id          TEXT PRIMARY KEY,
    query       TEXT NOT NULL,
    mode        TEXT NOT NULL,
    status      TEXT NOT NULL,
    phase       TEXT,
    session_id  TEXT,
    state       TEXT NOT NULL,
    last_seq    INTEGER NOT NULL DEFAULT -1,
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    finished_at REAL
);
CREATE INDEX research_runs_created ON research_runs (created_at DESC);
CREATE INDEX research_runs_finished ON research_runs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE research_events (
    run_id TEXT NOT NULL REFERENCES research_runs (id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    type   TEXT NOT NULL,
    data   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
