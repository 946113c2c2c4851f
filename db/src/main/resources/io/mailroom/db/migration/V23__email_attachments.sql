-- Attachments of emails (issue 27, item 1), owned by email-api.
--
-- Content is stored once per SHA-256 of its bytes, however many emails carry it (an invoice once,
-- a logo once for every email that shows it). An email refers to its attachments by hash, in the
-- order it gave them: email_attachment_ref, keyed by the effect's idempotency key. A retry is the
-- same effect and row; a resend is a new effect whose refs name the same hashes, so bytes are never
-- copied.
--
-- The refs leave with their effect, in the history cleaner's transaction that deletes it (email-api's
-- AttachmentRetention is one of the owners' retention steps, as email_rendering's is). No foreign key
-- to outbox_effect: the effect stays deletable and truncatable on its own (V7), and the step's own
-- pass takes refs whose effect is gone otherwise. An erasure removes the refs of the erased emails.
--
-- Content whose refs are all gone is deleted by the same step after a grace period measured from
-- last_used_at. An enqueue
-- upserts (locks) the content row it refers to before writing its ref, and the retention locks
-- FOR UPDATE SKIP LOCKED, so it never deletes content that an uncommitted enqueue refers to; the
-- foreign key from the refs is the last guard (a delete that raced a commit fails, nothing is lost).
CREATE TABLE email_attachment_content (
    sha256       char(64)    NOT NULL,
    content      bytea       NOT NULL,
    size         integer     NOT NULL,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz NOT NULL,
    CONSTRAINT email_attachment_content_pkey PRIMARY KEY (sha256),
    CONSTRAINT email_attachment_content_sha256_check CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    CONSTRAINT email_attachment_content_size_check CHECK (size = octet_length(content) AND size <= 104857600)
);

-- content without refs, oldest use first: what the retention reads
CREATE INDEX email_attachment_content_used_idx ON email_attachment_content (last_used_at);

-- The attachments of one email, as its envelope lists them (filename, type and content id are kept
-- here too, so support lists them for as long as the effect exists, after the queued payload is gone).
CREATE TABLE email_attachment_ref (
    idempotency_key varchar  NOT NULL,
    position        smallint NOT NULL,
    sha256          char(64) NOT NULL,
    filename        varchar  NOT NULL,
    content_type    varchar  NOT NULL,
    content_id      varchar,
    CONSTRAINT email_attachment_ref_pkey PRIMARY KEY (idempotency_key, position),
    CONSTRAINT email_attachment_ref_content_fk FOREIGN KEY (sha256)
        REFERENCES email_attachment_content (sha256),
    CONSTRAINT email_attachment_ref_position_check CHECK (position >= 0 AND position < 100),
    CONSTRAINT email_attachment_ref_filename_check CHECK (length(filename) BETWEEN 1 AND 255),
    CONSTRAINT email_attachment_ref_content_type_check CHECK (length(content_type) BETWEEN 3 AND 255),
    CONSTRAINT email_attachment_ref_content_id_check CHECK (content_id IS NULL OR length(content_id) BETWEEN 1 AND 255)
);

-- "is this content still referred to?" (the retention, and the foreign key's own check on delete)
CREATE INDEX email_attachment_ref_sha256_idx ON email_attachment_ref (sha256);

COMMENT ON TABLE email_attachment_content IS
    'Attachment bytes, once per SHA-256; owned by email-api; deleted a grace period after its last ref is gone.';
COMMENT ON TABLE email_attachment_ref IS
    'The attachments of each effect (by content hash, in order); owned by email-api; deleted with the effect by its retention.';
