-- waitForWork with a claim: a wait that ended with its registration still in place (woken otherwise, or handed
-- jobs delivered to an earlier wait of its worker) takes it out of the waiters table, so no
-- enqueue claims for it any more (one that did meanwhile has its jobs go elsewhere or back in
-- line). Only a tidy-up: a waiter whose store is gone is known dead anyway by its lock.
-- Params: $1 waiter id
-- Uses: the primary key of waiters (UNLOGGED: no WAL flush at commit).
DELETE FROM :"schema".waiters WHERE id = $1::text
