-- 'closed': a person decided that a failed email, or one parked for review, will not be sent
-- ("won't send"), with a reason in audit_log. It is final like 'cancelled' (which is for emails that
-- were still waiting), and retention removes closed rows and effects like other finished ones.
--
-- A CHECK on the partitioned outbox_message is dropped and added on the parent, which does the same
-- on every partition; the new list only adds a value, so the rows already there all pass it.
ALTER TABLE outbox_message DROP CONSTRAINT outbox_message_status_check;
ALTER TABLE outbox_message ADD CONSTRAINT outbox_message_status_check
    CHECK (status IN ('pending', 'running', 'done', 'failed', 'review', 'cancelled', 'closed'));

ALTER TABLE outbox_effect DROP CONSTRAINT outbox_effect_status_check;
ALTER TABLE outbox_effect ADD CONSTRAINT outbox_effect_status_check
    CHECK (status IN ('pending', 'running', 'done', 'failed', 'review', 'cancelled', 'closed'));
