package io.mailroom.support;

import java.util.List;

/**
 * One page of a list of emails, newest change first (sent ones: newest queued first, see {@link EmailFilter}).
 *
 * @param nextCursor pass it as {@code cursor} to get the next page; null on the last page
 */
public record EmailPage(EmailStatus status, List<EmailView> emails, String nextCursor) {

    public EmailPage {
        emails = List.copyOf(emails);
    }
}
