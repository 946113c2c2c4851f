--liquibase formatted sql

--changeset shop:1
CREATE TABLE orders (order_no text PRIMARY KEY, placed_by text NOT NULL, amount_eur numeric(12, 2) NOT NULL);

--changeset shop:2
CREATE TABLE invoice (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, order_no text NOT NULL REFERENCES orders);
