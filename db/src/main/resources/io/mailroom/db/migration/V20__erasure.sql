-- A customer's right to erasure (issue 26, item 3): support erases an address from the whole
-- history. A suppression the address had stays in force by a keyed hash of it (HMAC-SHA256 of the
-- normalized address), which the dispatcher's suppression check matches as well as the address.

ALTER TABLE suppression
    ADD COLUMN address_hash varchar,
    ADD CONSTRAINT suppression_address_hash_check CHECK (address_hash ~ '^[0-9a-f]{64}$');

-- partial on lifted_at only: "address_hash = ANY($1)" under a generic plan cannot prove "IS NOT NULL"
CREATE INDEX suppression_hash_idx ON suppression (address_hash) WHERE lifted_at IS NULL;

COMMENT ON COLUMN suppression.address_hash IS
    'HMAC-SHA256 (hex) of the normalized address of an erased address; address then holds the erasure''s marker.';

-- The key of those hashes when the service is given none (MAILROOM_ERASURE_KEY): one random key,
-- made here once, so every process of the database computes the same hash.
CREATE TABLE erasure_key (
    id         smallint    NOT NULL DEFAULT 1,
    secret     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT erasure_key_pkey PRIMARY KEY (id),
    CONSTRAINT erasure_key_one_check CHECK (id = 1),
    CONSTRAINT erasure_key_secret_check CHECK (octet_length(secret) = 32)
);

COMMENT ON TABLE erasure_key IS
    'The key of suppression.address_hash when none is configured; owned by delivery-events. 244 random bits.';

INSERT INTO erasure_key (id, secret)
VALUES (1, decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- Where an erasure looks for an address outside the emails' search terms: delivery events by the
-- recipient they name (orphans included), and audit entries of suppression changes by address.
CREATE INDEX delivery_event_recipient_idx ON delivery_event (recipient) WHERE recipient IS NOT NULL;
CREATE INDEX audit_log_address_idx ON audit_log ((detail ->> 'address')) WHERE (detail ->> 'address') IS NOT NULL;
