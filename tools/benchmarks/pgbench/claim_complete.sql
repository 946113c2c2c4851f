-- The reference limit of scenario 2, driven by pgbench: the runtime's claim and completion
-- statements (io.mailroom.bench.ReferenceSql) without any Java. One pgbench "transaction" is one
-- batch: a claim in its own transaction, then the completion (fenced message update, effect update,
-- attempt history) in a second one, as the runtime and the JDBC reference loop do.
--
-- pgbench cannot carry a result set from one statement to the next, so the claim and the message
-- update are wrapped in a CTE that aggregates their RETURNING rows into arrays (\gset); the
-- statements themselves, their predicates, locking clause and written columns are the runtime's.
-- Run (the benchmark tool does this for you, on a freshly loaded database):
--   pgbench -n -M prepared -c 2 -j 2 -t <batches per client> -D batch=100 -D record_attempts=1 \
--           -f benchmarks/pgbench/claim_complete.sql <database>

-- the claim's transaction, as ClaimStore runs it: the pick planned as an ordered index scan
BEGIN;
SET LOCAL enable_sort = off;
WITH picked (id, created_at) AS (
    SELECT c.id, c.created_at FROM mailroom.outbox_message AS c
    WHERE c.status = 'pending' AND c.available_at <= now() AND c.topic = 'bench.noop'
      AND (c.ordering_key IS NULL OR NOT EXISTS (
            SELECT 1 FROM mailroom.outbox_message AS earlier
            WHERE earlier.ordering_key = c.ordering_key AND earlier.id < c.id
              AND earlier.status IN ('pending', 'running')))
    ORDER BY c.available_at, c.id
    LIMIT :batch
    FOR NO KEY UPDATE SKIP LOCKED),
claimed AS (
    UPDATE mailroom.outbox_message AS m SET status = 'running', claimed_by = 'bench-pgbench', claimed_at = now(),
        claim_version = m.claim_version + 1, attempts = m.attempts + 1,
        lease_until = now() + make_interval(secs => 60.0), updated_at = now()
    FROM picked
    WHERE m.id = picked.id AND m.created_at = picked.created_at
    RETURNING m.id, m.created_at, m.topic, m.aggregate_type, m.aggregate_id, m.idempotency_key, m.ordering_key,
              m.payload, m.attempts, m.max_attempts, m.claim_version, m.claimed_at, m.lease_until)
SELECT count(*) AS claimed,
       coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(created_at), '{}') AS created_ats,
       coalesce(array_agg(claim_version), '{}') AS versions, coalesce(array_agg(idempotency_key), '{}') AS keys,
       coalesce(array_agg(attempts), '{}') AS attempt_nos, coalesce(array_agg(claimed_at), '{}') AS claimed_ats
FROM claimed \gset
COMMIT;

\if :claimed > 0
BEGIN;
WITH finished AS (
    UPDATE mailroom.outbox_message AS m SET
      status = CASE WHEN v.kind = 'release' THEN 'pending' WHEN v.kind <> 'retry' THEN v.kind
                    WHEN m.attempts >= m.max_attempts THEN 'failed' ELSE 'pending' END,
      available_at = CASE WHEN v.kind IN ('retry', 'release') THEN now() + make_interval(secs => v.delay_ms / 1000.0)
                          ELSE m.available_at END,
      attempts = CASE WHEN v.kind = 'release' THEN greatest(m.attempts - 1, 0) ELSE m.attempts END,
      lease_until = NULL,
      last_error = CASE WHEN v.kind = 'done' THEN m.last_error ELSE v.error END,
      finished_at = CASE WHEN v.kind = 'release' THEN NULL
                         WHEN v.kind = 'retry' AND m.attempts < m.max_attempts THEN NULL ELSE now() END,
      updated_at = now()
    FROM unnest(:ids::bigint[], :created_ats::timestamptz[], :versions::bigint[],
                array_fill('done'::varchar, ARRAY[:claimed::int]), array_fill(NULL::varchar, ARRAY[:claimed::int]),
                array_fill(0::bigint, ARRAY[:claimed::int]))
         AS v(id, created_at, claim_version, kind, error, delay_ms)
    WHERE m.id = v.id AND m.created_at = v.created_at AND m.claim_version = v.claim_version AND m.lease_until IS NOT NULL
    RETURNING m.id, m.created_at, m.idempotency_key, m.status, m.attempts, m.max_attempts,
              m.claim_version, m.claimed_by, m.claimed_at, m.last_error)
SELECT coalesce(array_agg(idempotency_key), '{}') AS f_keys, coalesce(array_agg(id), '{}') AS f_ids,
       coalesce(array_agg(status), '{}') AS f_statuses, coalesce(array_agg(attempts), '{}') AS f_attempts,
       coalesce(array_agg(last_error), '{}') AS f_errors
FROM finished \gset
UPDATE mailroom.outbox_effect AS e SET status = v.status, attempts = v.attempts, last_error = v.error, updated_at = now(),
       finished_at = CASE WHEN v.status IN ('done', 'failed', 'review', 'cancelled') THEN now() END
FROM unnest(:f_keys::varchar[], :f_ids::bigint[], :f_statuses::varchar[], :f_attempts::int[], :f_errors::varchar[])
     AS v(idempotency_key, message_id, status, attempts, error)
WHERE e.idempotency_key = v.idempotency_key AND e.message_id = v.message_id;
\if :record_attempts
INSERT INTO mailroom.outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker, started_at, finished_at,
                            outcome, error, detail)
SELECT * FROM unnest(:keys::varchar[], :ids::bigint[], :attempt_nos::int[], :versions::bigint[],
                     array_fill('bench-pgbench'::varchar, ARRAY[:claimed::int]), :claimed_ats::timestamptz[],
                     array_fill(now(), ARRAY[:claimed::int]), array_fill('done'::varchar, ARRAY[:claimed::int]),
                     array_fill(NULL::varchar, ARRAY[:claimed::int]), array_fill(NULL::jsonb, ARRAY[:claimed::int]));
\endif
COMMIT;
\endif
