-- Research runs as a queue (issue 24; docs/scaling.md): a run is "queued" until a worker claims
-- it, then held by a lease (who, until when) the worker renews; "control" carries a request
-- from any API replica to the worker holding the run ("cancel", or "continue" with the
-- client's dimensions as JSON). The single-process default never queues and leaves them NULL.
ALTER TABLE research_runs ADD COLUMN lease_owner TEXT;
ALTER TABLE research_runs ADD COLUMN lease_until REAL;
ALTER TABLE research_runs ADD COLUMN control TEXT;
CREATE INDEX research_runs_status ON research_runs (status, created_at);
