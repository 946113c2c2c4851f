-- A business's own first migration, at Spring Boot's and Flyway's default location: an orders table
-- of its own shape, which Mailroom must neither need nor collide with.
CREATE TABLE orders (
    order_no   text PRIMARY KEY,
    placed_by  text NOT NULL,
    amount_eur numeric(12, 2) NOT NULL
);
