-- Owners: every research run and session belongs to a principal (orchestrator/principals.py).
-- Rows written before owners existed belong to "local" (see ../migrations/0003_owners.sql).
ALTER TABLE research_runs ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';
CREATE INDEX research_runs_owner ON research_runs (owner, created_at DESC);

-- Sessions are addressed by (owner, id): the primary keys change in place.
ALTER TABLE session_turns DROP CONSTRAINT session_turns_session_id_fkey;
ALTER TABLE session_turns ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';
ALTER TABLE session_turns ALTER COLUMN owner DROP DEFAULT;
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';
ALTER TABLE sessions ALTER COLUMN owner DROP DEFAULT;
ALTER TABLE sessions DROP CONSTRAINT sessions_pkey;
ALTER TABLE sessions ADD PRIMARY KEY (owner, id);
ALTER TABLE session_turns DROP CONSTRAINT session_turns_pkey;
ALTER TABLE session_turns ADD PRIMARY KEY (owner, session_id, idx);
ALTER TABLE session_turns ADD FOREIGN KEY (owner, session_id)
    REFERENCES sessions (owner, id) ON DELETE CASCADE;
CREATE INDEX sessions_by_owner ON sessions (owner, updated DESC);
