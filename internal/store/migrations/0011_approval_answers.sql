-- An answer to an approval is stored whole, so that the turn waiting for it
-- in another process can take it from here: the scope of an approval
-- ('once', 'session', 'always'), the rule the person chose to save, and who
-- answered ('' for the process that asked). waiter is the lease owner whose
-- turn waits for the answer in its process ('' when the turn paused and
-- ended: an answer then resumes it wherever it is given).
ALTER TABLE approvals ADD COLUMN scope TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN rule TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN answered_by TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN waiter TEXT NOT NULL DEFAULT '';
