package io.mailroom.support;

import java.util.List;

/**
 * One page of emails with a delivery problem (bounced, complained), newest report first.
 *
 * @param nextCursor pass it as {@code cursor} for the next page; null on the last page
 */
public record DeliveryPage(String delivery, List<EmailView> emails, String nextCursor) {

    public DeliveryPage {
        emails = List.copyOf(emails);
    }
}
