-- The example shop's customer language and the two later events of an order, each of which sends an
-- email. locale is a BCP 47 tag the order service accepts (it knows which languages its emails
-- have); existing orders were all confirmed in English, hence the default.
ALTER TABLE orders ADD COLUMN locale varchar NOT NULL DEFAULT 'en'
    CONSTRAINT orders_locale_check CHECK (locale ~ '^[a-z]{2,3}(-[A-Za-z0-9]{1,8})*$' AND length(locale) <= 35);

-- At most one shipment and one cancellation per order (the primary keys), and never both: the order
-- service checks that under a row lock on the order, so both tables stay plain.
CREATE TABLE order_shipment (
    order_id        bigint      NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    carrier         varchar     NOT NULL CHECK (length(carrier) BETWEEN 1 AND 100),
    tracking_number varchar     NOT NULL CHECK (length(tracking_number) BETWEEN 1 AND 100),
    tracking_url    varchar     CHECK (tracking_url ~ '^https://' AND length(tracking_url) <= 2000),
    shipped_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT order_shipment_pkey PRIMARY KEY (order_id)
);

CREATE TABLE order_cancellation (
    order_id     bigint      NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    reason       varchar     CHECK (length(reason) BETWEEN 1 AND 500),
    cancelled_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT order_cancellation_pkey PRIMARY KEY (order_id)
);
