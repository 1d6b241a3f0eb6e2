-- Progress and logs from handlers (docs/progress.md): the latest progress value a handler reported
-- (JSON text) and the job's kept log tail (a JSON array of at most 100 lines), each NULL until a
-- handler reports one. Written only by renew and settle, fenced by the lease token, and kept
-- across attempts. Adding a column with no default rewrites nothing: old rows read NULL.
ALTER TABLE ferry_jobs ADD COLUMN progress TEXT;
ALTER TABLE ferry_jobs ADD COLUMN logs TEXT;
