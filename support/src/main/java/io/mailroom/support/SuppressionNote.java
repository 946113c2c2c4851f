package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.mailroom.delivery.suppression.Suppression;
import io.mailroom.delivery.suppression.SuppressionPolicy;
import io.mailroom.delivery.suppression.SuppressionList;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;

/**
 * The suppression in force for an email's recipient, as the email's card and the API show it: the
 * entry that stops a send (the most serious active one), with links to it on the suppression list.
 *
 * @param address     the suppressed address, normalized as the list stores it
 * @param reason      the entry's reason as stored: hard_bounce, complaint, soft_bounces, manual
 * @param since       when the address was suppressed
 * @param blocksRetry whether a retry would be stopped by it again, so Retry is not offered while it is
 *                    in force: every suppression does, except a complaint when the email itself was not
 *                    stopped by one (its topic may look past complaints, {@code suppression=allow-complained},
 *                    a setting of the dispatchers that support does not read)
 */
public record SuppressionNote(long id, String address, String reason, String reasonText, Instant since,
                              boolean blocksRetry) {

    private static final DateTimeFormatter DAY = DateTimeFormatter.ISO_LOCAL_DATE.withZone(ZoneOffset.UTC);

    /**
     * The note for an email whose recipient has these active entries; empty when there are none.
     *
     * @param stoppedBySuppression whether the email's last error says a suppression stopped it
     */
    static Optional<SuppressionNote> of(List<Suppression> active, boolean stoppedBySuppression) {
        Optional<Suppression> shown = SuppressionList.blocking(active, SuppressionPolicy.STRICT);
        if (shown.isEmpty()) {
            return Optional.empty();
        }
        SuppressionPolicy retryPolicy = stoppedBySuppression ? SuppressionPolicy.STRICT : SuppressionPolicy.ALLOW_COMPLAINED;
        Optional<Suppression> blocking = SuppressionList.blocking(active, retryPolicy);
        Suppression s = blocking.orElse(shown.get());
        return Optional.of(new SuppressionNote(s.id(), s.address(), s.reason().dbValue(), s.reason().words(), s.createdAt(),
                blocking.isPresent()));
    }

    /** The console's suppression list filtered to this address: where it is lifted. */
    @JsonProperty("consoleUrl")
    public String consoleUrl() {
        return "/console/suppressions?address=" + ConsolePages.url(address);
    }

    /** The API's entries of this address. */
    @JsonProperty("apiUrl")
    public String apiUrl() {
        return "/api/suppressions?address=" + ConsolePages.url(address);
    }

    /** Why a retry is refused while it is in force, naming the entry and what to do. */
    String retryRefusal(String key) {
        return "email " + key + " is not sent while " + address + " is suppressed (" + reasonText + " since "
                + DAY.format(since) + ", entry " + id + "); lift the suppression first (" + consoleUrl() + "), then retry";
    }
}
