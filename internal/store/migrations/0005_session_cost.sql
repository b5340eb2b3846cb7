-- A session's estimated cost in USD (0 while unknown) and the context use
-- of its latest request, as a percentage of the model's window.
ALTER TABLE sessions ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN context_percent REAL NOT NULL DEFAULT 0;
