-- Bulk actions of support (issue 26): an action (retry, close, resend, lift suppressions) applied by
-- the server to every email matching a search, after a person confirmed how many that was. One row
-- per run, with its progress; owned by support. The emails themselves change through their single
-- actions, one short transaction each, so no lock is held longer than one email's change.
CREATE TABLE bulk_action (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    action        varchar     NOT NULL,
    filter        jsonb       NOT NULL,
    confirmed     integer     NOT NULL,
    matched       integer     NOT NULL,
    applied       integer     NOT NULL DEFAULT 0,
    skipped       integer     NOT NULL DEFAULT 0,
    busy          integer     NOT NULL DEFAULT 0,
    state         varchar     NOT NULL DEFAULT 'running',
    actor         varchar     NOT NULL,
    role          varchar     NOT NULL,
    reason        varchar,
    error         varchar,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    CONSTRAINT bulk_action_action_check CHECK (action IN ('retry', 'close', 'resend', 'lift-suppression')),
    CONSTRAINT bulk_action_state_check CHECK (state IN ('running', 'done', 'interrupted', 'failed')),
    CONSTRAINT bulk_action_counts_check CHECK (confirmed >= 1 AND matched >= 0 AND applied >= 0 AND skipped >= 0
                                               AND busy >= 0 AND applied + skipped + busy <= confirmed)
);

CREATE INDEX bulk_action_created_idx ON bulk_action (created_at);

COMMENT ON TABLE bulk_action IS
    'Support''s bulk actions on a search: what, on which filter, how many were confirmed, progress and outcome.';
