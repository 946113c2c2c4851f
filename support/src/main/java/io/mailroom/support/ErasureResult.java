package io.mailroom.support;

import java.util.List;

/**
 * What erasing an address did (API, console and CLI answer with it). Nothing here names the
 * address: the answer is kept in logs and tickets too.
 *
 * @param erasure               the erasure's id, also in its audit entry and in the marker
 * @param marker                what the address became wherever it was ({@code erased-<id>@erased.invalid})
 * @param emails                emails sent to the address: recipient, name, data and renderings erased
 * @param emailsMentioning      other emails that mentioned it (data, reply-to, errors): the address masked
 * @param keys                  the keys of both, kept as they were
 * @param cancelled             emails to the address that were still waiting, cancelled so they are never sent
 * @param renderings            stored renderings erased
 * @param attempts              attempt records whose error or detail held it
 * @param deliveryEvents        delivery events erased (the email's, and those naming the address)
 * @param suppressions          suppression entries of the address (their address became the marker)
 * @param suppressionKeptByHash a suppression of the address is in force, kept under its keyed hash: the next
 *                              email to the address is still not sent
 * @param auditEntries          audit entries whose reason or detail held it
 */
public record ErasureResult(String erasure, String marker, int emails, int emailsMentioning, List<String> keys,
                            List<String> cancelled, int renderings, int attempts, int deliveryEvents, int suppressions,
                            boolean suppressionKeptByHash, int auditEntries) {

    public ErasureResult {
        keys = List.copyOf(keys);
        cancelled = List.copyOf(cancelled);
    }

    /** Whether anything held the address. */
    public boolean foundAnything() {
        return emails + emailsMentioning + deliveryEvents + suppressions + auditEntries > 0;
    }

    /** One sentence for people (console message, CLI). */
    public String summary() {
        if (!foundAnything()) {
            return "Nothing stored held this address; the request is recorded in the audit log (erasure " + erasure + ").";
        }
        return "Erased: " + emails + " email(s) to the address" + (emailsMentioning == 0 ? "" : ", " + emailsMentioning
                + " mentioning it") + ", " + renderings + " rendering(s), " + deliveryEvents + " delivery event(s), "
                + suppressions + " suppression entr" + (suppressions == 1 ? "y" : "ies")
                + (cancelled.isEmpty() ? "" : "; " + cancelled.size() + " waiting email(s) cancelled")
                + (suppressionKeptByHash ? "; its suppression stays in force (kept by a keyed hash)" : "")
                + ". Erasure " + erasure + ".";
    }
}
