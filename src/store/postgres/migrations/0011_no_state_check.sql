-- The CHECK on jobs.state goes, as it went from the SQLite store (its migration 0005): every insert
-- and every update that writes a row evaluated it, and a statement that writes one row (a serial
-- enqueue, a take) builds the constraint's expression anew on each run (ExecRelCheck reads and
-- plans the stored expression once per execution), for a rule that only Ferry's own statements
-- could break: they write the five states and nothing else. Measured as the server backend's CPU
-- time per single-row insert, named and prepared, synchronous_commit off, medians of 15-20 chunks
-- of 200 interleaved on a copy of the jobs table (shared 2-core machine, load 7-10): 142-161 µs
-- with the CHECK, 133-140 µs without.
-- Catalog only: no rewrite, no scan, the lock held for an instant. A process of an older Ferry
-- still running writes the same states, so it is unaffected.

ALTER TABLE :"schema".jobs DROP CONSTRAINT IF EXISTS jobs_state_check;
