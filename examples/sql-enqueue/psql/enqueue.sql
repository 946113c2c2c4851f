-- A business enqueues a Mailroom email from psql, in its own transaction (docs/ENQUEUE_SQL.md).
--
--   psql -v user_id=7 -v finish=COMMIT   -f enqueue.sql     the email exists once this commits
--   psql -v user_id=7 -v finish=ROLLBACK -f enqueue.sql     nothing is left
--   psql -v user_id=7 -v finish=COMMIT -v to_address=not-an-address -f enqueue.sql
--                                        refused: ERROR 22023, COLUMN NAME to.address
--
-- enqueue_email lives in Mailroom's schema (mailroom unless it was migrated into another:
-- psql -v schema=billing_mail ...).
\set ON_ERROR_STOP on
\if :{?schema}
\else
\set schema mailroom
\endif
\set VERBOSITY verbose
\if :{?to_address}
\else
\set to_address an@example.com
\endif

BEGIN;
-- ... the business's own writes go here, in the same transaction ...
SELECT :"schema".enqueue_email(
    template        => 'welcome',
    to_address      => :'to_address',
    to_name         => 'Nguyễn Văn An',
    locale          => 'vi',
    about_type      => 'user',
    about_id        => :'user_id',
    idempotency_key => 'email-user-' || :'user_id' || '-welcome',
    ordering_key    => 'user-' || :'user_id',
    data            => json_build_object('user', json_build_object('id', :'user_id', 'plan', 'pro', 'trialDays', 14))
) AS message_id;
:finish;
