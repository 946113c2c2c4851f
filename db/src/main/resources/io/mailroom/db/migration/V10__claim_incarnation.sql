-- Which process made a claim (issue 24, item 17). A dispatcher restarted under the same worker id
-- (a StatefulSet pod, a systemd unit with a fixed MAILROOM_WORKER_ID) must tell the claims of the
-- process before it, which stopped while holding them, from its own. claimed_by names the worker,
-- claimed_incarnation the process: a random id each Dispatcher draws when it is created. Null on
-- rows claimed before this column existed (they are an earlier process's, by definition).
-- Adding a nullable column without a default is a catalogue change only: no rewrite of the queue.
ALTER TABLE outbox_message ADD COLUMN claimed_incarnation varchar;

-- An attempt cut short because the process holding the claim stopped (killed, crashed, restarted)
-- and its successor under the same worker id found the claim at start: counted, like an expired
-- lease, so that a message that kills its process every time reaches its attempt limit.
-- NOT VALID, then VALIDATE: the check of the existing rows runs without blocking writers.
ALTER TABLE outbox_attempt DROP CONSTRAINT outbox_attempt_outcome_check;
ALTER TABLE outbox_attempt ADD CONSTRAINT outbox_attempt_outcome_check
    CHECK (outcome IN ('done', 'retry', 'failed', 'review', 'lease_expired', 'released', 'claim_lost', 'interrupted'))
    NOT VALID;
ALTER TABLE outbox_attempt VALIDATE CONSTRAINT outbox_attempt_outcome_check;
