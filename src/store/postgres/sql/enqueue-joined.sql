-- enqueue of a batch without unique keys from the store's own connections: the same call of
-- enqueue_batch as sql/enqueue.sql, its columns sent as text, one element after another, which
-- the server splits (string_to_array, a scan for the separator) instead of arrays the client
-- builds element by element. The client's part is then a few joins (postgres-enqueue-arrays.ts,
-- joinedEnqueueParams): for 10,000 jobs in a fresh process, as a bulk enqueue runs, the binary
-- arrays' loop over the jobs ran unoptimised for much of the call (its four string writes a job go
-- through Buffer's own JavaScript). bench:peers bulk-enqueue (10,000 jobs, one enqueueMany),
-- this and the binary arrays (commit 741554e) run in turn, two invocations of 3 runs each, load
-- 6-10 on the shared 2-core machine: medians 26,169 and 24,573 jobs/s (0.62x and 0.52x the floor,
-- 1.49x and 1.29x pg-boss) against 20,010 and 15,427 (0.42x and 0.47x the floor, 1.02x and 1.11x).
-- Separators: U+001E (record separator) between texts, which neither a queue or job name (letters,
-- digits, '.', '_', ':', '-') nor JSON text can hold (JSON escapes every control character), and
-- the store takes this path only when no element does; ',' between numbers, where an empty element
-- is NULL (run_at, timeout_ms). A batch here has two jobs or more (one job goes through
-- sql/enqueue-one.sql), so no column is the empty string, which string_to_array reads as no element.
-- Numbers reach the server as the digits JavaScript writes, so one that is no integer of its
-- column is refused by the server, as in a caller's transaction.
-- A group holds any character, so a batch with one whose group holds the separator goes as arrays
-- too; the groups, deadlines and metas of a batch where no job has any are NULL (sql/enqueue.sql).
-- A meta is JSON text, so it never holds the separator.
-- Params: $1 queues, $2 names, $3 payloads (each joined by U+001E), $4 priorities, $5 run_at (ms;
--         empty: NULL), $6 delay_ms, $7 max_attempts, $8 timeout_ms (empty: NULL) (each joined by
--         ','), $9 groups (joined by U+001E, where an empty element is NULL: a group has 1 character
--         at least), $10 expires_at, $11 expires_in_ms (ms; empty: NULL; joined by ','), $12 metas
--         (JSON texts joined by U+001E, where an empty element is NULL), $13 now (ms, or NULL for the
--         server's clock), $14 the lease tokens' random base (deliveries, as in sql/enqueue.sql)
-- Returns: as sql/enqueue.sql (ids joined by ',', and 't' or 'f' per job).
SELECT string_agg(e.id::text, ',' ORDER BY e.ord) AS ids,
       string_agg(CASE WHEN e.created THEN 't' ELSE 'f' END, '' ORDER BY e.ord) AS created
FROM :"schema".enqueue_batch(string_to_array($1::text, chr(30)), string_to_array($2::text, chr(30)),
                             string_to_array($3::text, chr(30)), string_to_array($4::text, ',')::integer[],
                             string_to_array($5::text, ',', '')::bigint[], string_to_array($6::text, ',')::bigint[],
                             string_to_array($7::text, ',')::integer[], string_to_array($8::text, ',', '')::integer[],
                             NULL::text[], $13::bigint, $14::text, string_to_array($9::text, chr(30), ''),
                             string_to_array($10::text, ',', '')::bigint[], string_to_array($11::text, ',', '')::bigint[],
                             string_to_array($12::text, chr(30), ''))
     WITH ORDINALITY AS e(id, created, ord)
