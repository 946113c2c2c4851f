-- The shop's own first migration. Its orders table is the shop's business: one item per order,
-- amounts in cents; Mailroom's tables are Mailroom's and migrate with their own history.
CREATE TABLE orders (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_email text        NOT NULL,
    customer_name  text        NOT NULL,
    item           text        NOT NULL,
    quantity       integer     NOT NULL CHECK (quantity > 0),
    total_cents    bigint      NOT NULL CHECK (total_cents >= 0),
    placed_at      timestamptz NOT NULL
);
