-- Idempotency keys of POST /orders: a client that did not see the answer to its request (a 503
-- after the commit went through, a dropped connection) repeats it with the same Idempotency-Key
-- header and gets the order that request created instead of a second order and a second email.
-- The row is written in the order's own transaction, so the key exists exactly when the order does;
-- the primary key makes a concurrent second request with the same key fail with 23505 and roll
-- back, after which it answers with the winner's order. request_hash is the SHA-256 (hex) of the
-- request in normalized form, to tell a repeat from a different request under a reused key.
CREATE TABLE order_request_key (
    idempotency_key varchar     NOT NULL,
    request_hash    varchar     NOT NULL CHECK (request_hash ~ '^[0-9a-f]{64}$'),
    order_id        bigint      NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT order_request_key_pkey PRIMARY KEY (idempotency_key),
    CONSTRAINT order_request_key_key_check CHECK (length(idempotency_key) BETWEEN 1 AND 255)
);
CREATE INDEX order_request_key_order_idx ON order_request_key (order_id);

-- RFC 5321 limits a path to 256 octets with the angle brackets, so an address to 254 characters;
-- the order API and the dispatcher enforce that (MailboxRules). NOT VALID: rows written under the
-- old limit of 320 stay readable; every new row is checked.
ALTER TABLE orders DROP CONSTRAINT orders_customer_email_check;
ALTER TABLE orders ADD CONSTRAINT orders_customer_email_check
    CHECK (length(customer_email) BETWEEN 3 AND 254) NOT VALID;
