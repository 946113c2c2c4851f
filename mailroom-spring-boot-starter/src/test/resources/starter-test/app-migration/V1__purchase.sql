-- the application's own first migration, in the application's own schema and history
CREATE TABLE purchase (ref text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now());
