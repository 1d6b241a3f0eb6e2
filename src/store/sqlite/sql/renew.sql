-- renew: extends a lease. Fenced by the lease token; an expired but not yet recovered lease may
-- still be renewed, since nobody else can hold the job until recovery.
-- With it, what the handler reported since the last renewal (store/kernel/job-reports.ts): the
-- latest progress and the whole log tail, each NULL to keep the stored one.
-- Params: :id, :lease_token, :lease_expires_at, :progress (JSON text or NULL), :logs (JSON text or
--         NULL), :now
-- Returns: nothing; changes = 0 means the lease was lost.
UPDATE ferry_jobs SET lease_expires_at = :lease_expires_at, updated_at = :now,
    progress = coalesce(:progress, progress), logs = coalesce(:logs, logs)
WHERE id = :id AND state = 'active' AND lease_token = :lease_token
