-- 0005_approval_answers, as the SQLite store's 0011: an answer to an
-- approval is stored whole (scope, the rule chosen, who answered), so the
-- turn waiting for it in another process can take it from here; waiter is
-- the lease owner whose turn waits for the answer ('' once it ended).
ALTER TABLE approvals ADD COLUMN scope text NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN rule text NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN answered_by text NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN waiter text NOT NULL DEFAULT '';
