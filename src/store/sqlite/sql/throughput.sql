-- throughput: the counts of the minutes in [:from, :to), of :queue or (NULL) every queue, by
-- minute then queue.
-- Params: :from, :to, :queue (or NULL)
-- Returns: minute, queue, completed, failed
-- Uses: ferry_throughput's primary key (minute, queue): a range of at most a day of minutes.
SELECT minute, queue, completed, failed FROM ferry_throughput
WHERE minute >= :from AND minute < :to AND (:queue IS NULL OR queue = :queue)
ORDER BY minute, queue
