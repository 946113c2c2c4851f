package io.mailroom.email.render;

import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.Text;
import io.mailroom.email.config.Checks;
import io.mailroom.email.config.InvalidSettingException;
import io.mailroom.email.config.Settings;

import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.Map;

/**
 * Settings of the email templates.
 *
 * @param from         the From header of every email ({@code MAILROOM_MAIL_FROM}, falling back to
 *                     {@code MAILROOM_SMTP_FROM}); {@code Shop <shop@example.com>} or a bare address
 * @param shopName     signs the emails ({@code MAILROOM_SHOP_NAME})
 * @param zone         time zone for dates shown to the customer ({@code MAILROOM_MAIL_TIMEZONE})
 * @param maxBodyBytes limit for text + HTML body in UTF-8 bytes ({@code MAILROOM_MAX_BODY_BYTES})
 */
public record RenderConfig(EmailAddress from, String shopName, ZoneId zone, long maxBodyBytes) {

    public static final String DEFAULT_SHOP_NAME = "Mailroom Shop";
    public static final ZoneId DEFAULT_ZONE = ZoneId.of("UTC");
    public static final long DEFAULT_MAX_BODY_BYTES = Email.DEFAULT_MAX_BODY_BYTES;
    public static final long MAX_BODY_BYTES_LIMIT = 20L * 1024 * 1024;

    public RenderConfig {
        Checks.notNull("MAILROOM_MAIL_FROM", from);
        shopName = Checks.notBlank("MAILROOM_SHOP_NAME", shopName);
        if (Text.firstForbiddenInHeader(shopName) >= 0) {
            throw new InvalidSettingException("MAILROOM_SHOP_NAME", "MAILROOM_SHOP_NAME must not contain control characters");
        }
        Checks.notNull("MAILROOM_MAIL_TIMEZONE", zone);
        if (maxBodyBytes < 1024 || maxBodyBytes > MAX_BODY_BYTES_LIMIT) {
            throw new InvalidSettingException("MAILROOM_MAX_BODY_BYTES",
                    "MAILROOM_MAX_BODY_BYTES must be 1024.." + MAX_BODY_BYTES_LIMIT + ", got " + maxBodyBytes);
        }
    }

    public static RenderConfig of(EmailAddress from) {
        return new RenderConfig(from, DEFAULT_SHOP_NAME, DEFAULT_ZONE, DEFAULT_MAX_BODY_BYTES);
    }

    public RenderConfig withMaxBodyBytes(long maxBodyBytes) {
        return new RenderConfig(from, shopName, zone, maxBodyBytes);
    }

    public static RenderConfig fromEnv(Map<String, String> env) {
        Settings s = new Settings(env);
        String fromVar = s.string("MAILROOM_MAIL_FROM") != null ? "MAILROOM_MAIL_FROM" : "MAILROOM_SMTP_FROM";
        String mailbox = s.string(fromVar);
        if (mailbox == null) {
            throw new InvalidSettingException("MAILROOM_MAIL_FROM", "MAILROOM_MAIL_FROM (or MAILROOM_SMTP_FROM) is required");
        }
        EmailAddress from;
        try {
            from = EmailAddress.parseMailbox(mailbox);
        } catch (InvalidEmailException e) {
            throw new InvalidSettingException(fromVar, fromVar + " is not a valid mailbox: " + e.getMessage());
        }
        ZoneId zone;
        String zoneName = s.string("MAILROOM_MAIL_TIMEZONE");
        try {
            zone = zoneName == null ? DEFAULT_ZONE : ZoneId.of(zoneName);
        } catch (DateTimeException e) {
            throw new InvalidSettingException("MAILROOM_MAIL_TIMEZONE", "MAILROOM_MAIL_TIMEZONE is not a time zone id, got '" + zoneName + "'");
        }
        long maxBody = s.integer("MAILROOM_MAX_BODY_BYTES", (int) DEFAULT_MAX_BODY_BYTES);
        return new RenderConfig(from, s.string("MAILROOM_SHOP_NAME", DEFAULT_SHOP_NAME), zone, maxBody);
    }
}
