-- What each email was rendered to when it was sent: support sees what the customer got.
--
-- One row per outbox message (its effect's idempotency key), upserted by the dispatcher in the
-- short transaction that reserves the key, before the send: it holds the rendering of the latest
-- attempt that reached the provider step, and exists even when the process dies mid-send.
-- Retries re-render the same request, so one row per attempt would mostly repeat the same parts
-- (up to max_attempts copies of an HTML part); `attempt` says which attempt of the timeline this
-- rendering belongs to, and `template_version` whether a template deploy changed it.
--
-- Retention follows the support history, not the hot queue: support shows an email for as long as
-- its outbox_effect exists (90 days by default), while outbox_message partitions go after 3. So the
-- table is not partitioned; HistoryCleaner deletes a rendering in small batches once no effect of
-- its key and message is left (it runs right after the effects, so both leave in the same run).
-- No foreign key to outbox_effect: the effect must stay deletable (and truncatable) on its own.
--
-- Size: text and HTML together are capped by MAILROOM_MAX_BODY_BYTES (1 MiB by default) before a
-- message is ever rendered to the end; the CHECK below is the hard ceiling of that setting (20 MiB),
-- so no composer can store more. The subject is capped as the Email record caps it (500 characters).
CREATE TABLE email_rendering (
    idempotency_key    varchar     NOT NULL,
    message_id         bigint      NOT NULL,
    message_created_at timestamptz NOT NULL,
    attempt            integer     NOT NULL,
    template           varchar,
    template_version   varchar     NOT NULL,
    locale             varchar,
    subject            varchar     NOT NULL,
    text_part          text        NOT NULL,
    html_part          text,
    rendered_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT email_rendering_pkey PRIMARY KEY (idempotency_key),
    CONSTRAINT email_rendering_attempt_check CHECK (attempt >= 1),
    -- null template: the composer does not render from a named template (a custom composer)
    CONSTRAINT email_rendering_template_check CHECK (length(template) BETWEEN 1 AND 200),
    CONSTRAINT email_rendering_version_check CHECK (length(template_version) BETWEEN 1 AND 100),
    CONSTRAINT email_rendering_locale_check CHECK (length(locale) BETWEEN 1 AND 100),
    CONSTRAINT email_rendering_subject_check CHECK (length(subject) BETWEEN 1 AND 500),
    CONSTRAINT email_rendering_size_check
        CHECK (octet_length(text_part) + coalesce(octet_length(html_part), 0) <= 20971520)
);
-- The cleaner walks old renderings oldest first.
CREATE INDEX email_rendering_rendered_idx ON email_rendering (rendered_at);

COMMENT ON TABLE email_rendering IS
    'What each email was rendered to (latest attempt that reached the provider step); kept as long as its outbox_effect.';
