-- schedules: every schedule, by id, and the store's schedules version (the control table's row
-- 'schedules', moved by every change: schedules-write.sql), read in one snapshot.
-- Params: none
-- Returns: one row per schedule (its columns, by id), each with schedules_version (NULL before the
--          first change); one row whose columns are NULL but schedules_version when there is none.
-- Uses: the control table's primary key; the schedules table (one row per schedule), read whole.
SELECT (SELECT c.at FROM :"schema".control AS c WHERE c.key = 'schedules')::text AS schedules_version, s.*
FROM (VALUES (1)) AS one(n)
LEFT JOIN :"schema".schedules AS s ON true
ORDER BY s.id
