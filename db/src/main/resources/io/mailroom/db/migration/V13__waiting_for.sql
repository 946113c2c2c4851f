-- What a pending message handed back without an attempt waits for (issue 24, item 15): a code its
-- handler chose, such as 'breaker:smtp' for an email the circuit breaker of transport smtp refused.
-- Such a message is handed back for the rest of the breaker's open wait; when that breaker lets
-- calls through again, the dispatcher makes the messages waiting for it available at once instead
-- of leaving them behind the backlog until the wait is over. Set only by a hand-back, cleared by the
-- next claim (and by a person's retry, reschedule or cancel): a running or finished row waits for
-- nothing. Null on every row before this column existed.
-- Adding a nullable column without a default is a catalogue change only: no rewrite of the queue.
ALTER TABLE outbox_message ADD COLUMN waiting_for varchar;
ALTER TABLE outbox_message ADD CONSTRAINT outbox_message_waiting_for_check
    CHECK (length(waiting_for) BETWEEN 1 AND 200);

-- The rows a breaker's recovery looks for: few (the emails claimed while it opened), so a small
-- partial index rather than a scan of every pending row.
CREATE INDEX outbox_message_waiting_idx ON outbox_message (waiting_for, topic) WHERE waiting_for IS NOT NULL;
