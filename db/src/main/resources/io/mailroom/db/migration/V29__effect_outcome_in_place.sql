-- An email's outcome is written into its effect row in place (a HOT update), not as a new row
-- version in every index of the table.
--
-- Every email's completion sets its effect's status and updated_at. The status index
-- (status, updated_at) changed with both, so PostgreSQL wrote each outcome as a new row version
-- with a new entry in all six indexes of outbox_effect: the most expensive statement of the queue's
-- path (BENCHMARKS.md, issue 28, "the effect's outcome in place"). An update that changes no indexed
-- column and finds room on its page stays on the page and touches no index; a column in an index's
-- key, its expression or its predicate counts as indexed, so no index of this table may mention
-- status or updated_at. (An outcome that writes a new error still adds an entry to the error words
-- index: retries and failures, not the sends.)
--
-- What support lists by status without that index:
-- - the emails that did not go through (failed, review, cancelled, closed), newest change first,
--   through two generated columns that hold the status and updated_at for those statuses and are
--   NULL otherwise: a completion that sends (pending -> done) or retries (pending -> pending) leaves
--   them NULL, so they do not block the in-place update, while a move into or out of those statuses
--   does change them and updates the index as before;
-- - the emails that wait (pending), through the queue's own partial indexes (outbox-core joins them);
-- - the sent ones, newest first by the time they were queued, through the created_at index.
--
-- Adding stored generated columns rewrites outbox_effect and rebuilds its indexes under an exclusive
-- lock, so enqueues wait for it: 6 s for 1,000,000 effects (550 MB) on a 2-core server with
-- PostgreSQL 15, so about a minute for ten million. Apply it in a quiet moment.
ALTER TABLE outbox_effect
    ADD COLUMN exception_status varchar GENERATED ALWAYS AS
        (CASE WHEN status IN ('failed', 'review', 'cancelled', 'closed') THEN status END) STORED,
    ADD COLUMN exception_at timestamptz GENERATED ALWAYS AS
        (CASE WHEN status IN ('failed', 'review', 'cancelled', 'closed') THEN updated_at END) STORED;

CREATE INDEX outbox_effect_exception_idx ON outbox_effect (exception_status, exception_at, idempotency_key)
    WHERE exception_status IS NOT NULL;
DROP INDEX outbox_effect_status_idx;

-- Room on each page for the outcome's row version: a page is filled to 70 % by inserts, and the
-- completion of a batch of its rows writes their new versions into the rest (the old ones are pruned
-- later). Applies to pages written from now on.
ALTER TABLE outbox_effect SET (fillfactor = 70);

COMMENT ON COLUMN outbox_effect.exception_status IS
    'status when it is failed, review, cancelled or closed, else NULL (generated; outbox_effect_exception_idx)';
COMMENT ON COLUMN outbox_effect.exception_at IS
    'updated_at when status is failed, review, cancelled or closed, else NULL (generated)';
