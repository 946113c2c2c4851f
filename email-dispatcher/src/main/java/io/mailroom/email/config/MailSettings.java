package io.mailroom.email.config;

import io.mailroom.outbox.Checks;

import io.mailroom.outbox.InvalidSettingException;

import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;

/**
 * What every email of this dispatcher shares whatever its template.
 *
 * @param from         the From header unless a topic names its own ({@code MAILROOM_MAIL_FROM}, falling
 *                     back to {@code MAILROOM_SMTP_FROM}); {@code Shop <shop@example.com>} or a bare address
 * @param maxBodyBytes limit for text + HTML body in UTF-8 bytes ({@code MAILROOM_MAX_BODY_BYTES})
 */
public record MailSettings(EmailAddress from, long maxBodyBytes) {

    public static final long DEFAULT_MAX_BODY_BYTES = Email.DEFAULT_MAX_BODY_BYTES;
    public static final long MAX_BODY_BYTES_LIMIT = 20L * 1024 * 1024;

    public MailSettings {
        Checks.notNull("MAILROOM_MAIL_FROM", from);
        if (maxBodyBytes < 1024 || maxBodyBytes > MAX_BODY_BYTES_LIMIT) {
            throw new InvalidSettingException("MAILROOM_MAX_BODY_BYTES",
                    "MAILROOM_MAX_BODY_BYTES must be 1024.." + MAX_BODY_BYTES_LIMIT + ", got " + maxBodyBytes);
        }
    }

    public static MailSettings of(EmailAddress from) {
        return new MailSettings(from, DEFAULT_MAX_BODY_BYTES);
    }

}
