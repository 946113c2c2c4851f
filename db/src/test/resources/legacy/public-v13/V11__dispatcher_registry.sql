-- The running dispatchers (issue 24, item 22): each one upserts its row at start and at every
-- heartbeat, and deletes it when it stops gracefully. What they serve is what makes a topic
-- "unserved": emails due on a topic no live dispatcher names wait forever, and the dispatchers,
-- the metrics and the support console say so. One row per worker id: a process restarted under
-- the same id (a StatefulSet pod) replaces its predecessor's row; incarnation tells them apart,
-- as on the claims (outbox_message.claimed_incarnation). A row is live while expires_at is ahead
-- (each dispatcher sets it from its own heartbeat interval); dead rows are removed after a day.
CREATE TABLE outbox_dispatcher (
    worker_id    varchar     NOT NULL PRIMARY KEY,
    incarnation  varchar     NOT NULL,
    host         varchar     NOT NULL,
    version      varchar     NOT NULL,
    topics       varchar[]   NOT NULL,
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    CONSTRAINT outbox_dispatcher_worker_check CHECK (length(worker_id) BETWEEN 1 AND 200),
    CONSTRAINT outbox_dispatcher_host_check CHECK (length(host) <= 255),
    CONSTRAINT outbox_dispatcher_version_check CHECK (length(version) <= 100)
);

COMMENT ON TABLE outbox_dispatcher IS
    'Running dispatchers (worker id, process incarnation, host, version, topics served, heartbeats); live while expires_at is ahead.';
