package io.mailroom.support;

import java.util.List;
import java.util.Map;

/**
 * One page of a search, newest queued first.
 *
 * @param search     the search as request parameters (without the cursor)
 * @param nextCursor pass it as {@code cursor} to continue; null when nothing more matches. A page may
 *                   hold fewer than {@code limit} emails and still have a next one: a search that
 *                   filters by delivery state stops after reading a bounded number of emails
 */
public record SearchPage(Map<String, String> search, List<EmailView> emails, String nextCursor) {

    public SearchPage {
        search = Map.copyOf(search);
        emails = List.copyOf(emails);
    }
}
