package io.mailroom.support;

import java.util.List;

/**
 * Every email of one order, oldest first, each with its timeline.
 *
 * @param truncated true when the order has more than {@link SupportService#MAX_EMAILS_PER_ORDER} emails and only the first are listed
 */
public record OrderEmails(String orderId, List<EmailView> emails, boolean truncated) {

    public OrderEmails {
        emails = List.copyOf(emails);
    }
}
