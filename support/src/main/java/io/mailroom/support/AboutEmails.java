package io.mailroom.support;

import java.util.List;

/**
 * Every email about one business entity, oldest first, each with its timeline.
 *
 * @param truncated true when the entity has more than {@link SupportService#MAX_EMAILS_PER_ENTITY} emails and
 *                  only the first are listed
 */
public record AboutEmails(About about, List<EmailView> emails, boolean truncated) {

    public AboutEmails {
        emails = List.copyOf(emails);
    }
}
