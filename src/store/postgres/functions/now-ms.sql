-- now_ms: the store's clock when a call gives no `now`: the server's, so workers on many hosts
-- agree on what is due and what has expired. statement_timestamp() is fixed for the statement (the
-- whole function call), so every row a call touches gets the same instant.
-- Parameters: none.
-- Returns: epoch milliseconds (bigint).
-- Relies on: no table. Settings: none (an SQL function, STABLE, which the planner may inline).
CREATE OR REPLACE FUNCTION :"schema".now_ms() RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint $$;
