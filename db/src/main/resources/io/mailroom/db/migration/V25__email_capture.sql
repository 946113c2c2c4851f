-- Staging capture (issue 27, item 6): the transport `capture` renders, reserves and records an email
-- exactly as a real send would, builds the MIME message the SMTP transport would send, and stores it
-- here instead of sending it. Support lists and shows captured mail; nothing leaves the process.
--
-- One row per effect (its idempotency key): a repeated send of the same key (a resend of an unknown
-- outcome) replaces the row, as a provider that deduplicates by key would keep one message. No
-- foreign key to outbox_effect, for the reason email_rendering has none: the effect must stay
-- deletable on its own. Retention deletes a capture with its effect (CaptureRetention), erasure
-- deletes the captures of the erased keys (CaptureErasure). Owned by email-dispatcher.
--
-- Size: the MIME message of a body capped by MAILROOM_MAX_BODY_BYTES (1 MiB by default, 20 MiB at
-- most) in base64 or quoted-printable, with headers; the CHECK is a hard ceiling of 64 MiB.
CREATE TABLE email_capture (
    idempotency_key varchar     NOT NULL,
    id              bigint      GENERATED ALWAYS AS IDENTITY,
    captured_at     timestamptz NOT NULL DEFAULT now(),
    sender          varchar     NOT NULL,
    recipients      varchar     NOT NULL,
    subject         varchar     NOT NULL,
    message_id      varchar     NOT NULL,
    raw_mime        bytea       NOT NULL,
    CONSTRAINT email_capture_pkey PRIMARY KEY (idempotency_key),
    CONSTRAINT email_capture_id_key UNIQUE (id),
    CONSTRAINT email_capture_subject_check CHECK (length(subject) BETWEEN 1 AND 500),
    CONSTRAINT email_capture_size_check CHECK (octet_length(raw_mime) <= 67108864)
);
-- Support's list (newest first, paged by (captured_at, id)) and retention's oldest-first walk.
CREATE INDEX email_capture_captured_idx ON email_capture (captured_at, id);

COMMENT ON TABLE email_capture IS
    'Mail the capture transport stored instead of sending (staging); kept as long as its outbox_effect. Owned by email-dispatcher.';
