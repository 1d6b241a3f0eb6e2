-- Progress and logs from handlers (docs/progress.md): the latest progress value a handler reported
-- (JSON text) and the job's kept log tail (a JSON array of at most 100 lines), each NULL until a
-- handler reports one. Written only by renew() and settle() (functions/), fenced by the lease
-- token, and kept across attempts. Columns without a default are catalog only: no table rewrite,
-- old rows read NULL. claim() returns the jobs row type column by column, so it changed with this
-- migration, as did renew(), settle() and settle_and_claim(), which take the reports as arrays
-- that default to NULL: a worker of the previous release, still running beside this one, calls
-- them as before and writes no report.
ALTER TABLE :"schema".jobs
  ADD COLUMN progress text,
  ADD COLUMN logs text;
