-- fireSchedule: one call of functions/fire-schedule.sql, so one round trip and one transaction.
-- Params: $1 id, $2 version, $3 last_slot (as the scheduler read them), $4 to_slot, $5 the states
--         of an unfinished job (kernel/schedules.ts, UNFINISHED_STATES), $6..$18 the jobs' arrays
--         as sql/enqueue.sql's $1..$13, $19 now (ms or NULL), $20 the lease tokens' random base
-- Returns: one row: outcome, ids (joined by ','; NULL for none), and the schedule's columns (of a
--          'stale' fire: as it is now; all NULL when it is gone, or for another outcome).
SELECT f.outcome, f.ids, (f.schedule).*
FROM :"schema".fire_schedule($1::text, $2::bigint, $3::bigint, $4::bigint, $5::text[], $6::text[], $7::text[],
                             $8::text[], $9::integer[], $10::bigint[], $11::bigint[], $12::integer[],
                             $13::integer[], $14::text[], $15::text[], $16::bigint[], $17::bigint[], $18::text[],
                             $19::bigint, $20::text) AS f
