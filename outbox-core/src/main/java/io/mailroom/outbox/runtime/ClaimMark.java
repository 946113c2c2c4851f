package io.mailroom.outbox.runtime;

import java.time.Instant;
import java.util.Comparator;
import java.util.Objects;

/**
 * A position in the claim index's order, (available_at, id): where a claimer's next claim may
 * start (see {@link ClaimMarks}).
 */
record ClaimMark(Instant availableAt, long id) implements Comparable<ClaimMark> {

    private static final Comparator<ClaimMark> ORDER =
            Comparator.comparing(ClaimMark::availableAt).thenComparingLong(ClaimMark::id);

    ClaimMark {
        Objects.requireNonNull(availableAt, "availableAt");
    }

    @Override
    public int compareTo(ClaimMark other) {
        return ORDER.compare(this, other);
    }
}
