-- Several recipients and tags (issue 27). An email may go to several To, Cc and Bcc recipients, and
-- each reports its own delivery: one row per (email, address) a provider reported on, moved only
-- forward by the same rank as the email's own state (delivery_state, which keeps the furthest state
-- any of its recipients reached). A recipient's row belongs to its email's row and leaves with it
-- (retention, by the foreign key). Owned by delivery-events.
CREATE TABLE delivery_recipient_state (
    idempotency_key varchar     NOT NULL,
    address         varchar     NOT NULL,
    state           varchar     NOT NULL,
    detail          varchar,
    updated_at      timestamptz NOT NULL,
    CONSTRAINT delivery_recipient_state_pkey PRIMARY KEY (idempotency_key, address),
    CONSTRAINT delivery_recipient_state_email_fk FOREIGN KEY (idempotency_key)
        REFERENCES delivery_state (idempotency_key) ON DELETE CASCADE,
    CONSTRAINT delivery_recipient_state_state_check CHECK (state IN ('deferred', 'delivered', 'bounced', 'complained')),
    CONSTRAINT delivery_recipient_state_address_check CHECK (length(address) BETWEEN 1 AND 320),
    CONSTRAINT delivery_recipient_state_detail_check CHECK (length(detail) <= 2000)
);

COMMENT ON TABLE delivery_recipient_state IS
    'The delivery state of each recipient of an email a provider reported on; owned by delivery-events.';

-- The tags a provider echoed in an event (name -> value, as the email was sent with them), shown by
-- support and counted by the delivery metrics. At most 20 tags of 64 + 256 characters: well under the bound.
ALTER TABLE delivery_event ADD COLUMN tags jsonb;
ALTER TABLE delivery_event ADD CONSTRAINT delivery_event_tags_check
    CHECK (tags IS NULL OR (jsonb_typeof(tags) = 'object' AND length(tags::text) <= 8192));
