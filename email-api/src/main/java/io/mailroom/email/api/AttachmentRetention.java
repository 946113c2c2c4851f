package io.mailroom.email.api;

import io.mailroom.outbox.maintenance.RetentionStep;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_CONTENT;
import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_REF;
import static org.jooq.impl.DSL.select;
import static org.jooq.impl.DSL.selectOne;

/**
 * The retention of attachment content: bytes that no email refers to any more (its refs left with
 * their effects, dropped by the history's retention or by an erasure) are deleted once unused for
 * {@code grace}. Run by the history cleaner with the other owners' steps; the refs themselves need
 * no step, they leave with their effect ({@code ON DELETE CASCADE}).
 *
 * <p>The grace period is what keeps an enqueue that is still open safe beside the row lock (see
 * {@link AttachmentStore}): a row is taken only when its last use is older than {@code grace}, it is
 * locked {@code FOR UPDATE SKIP LOCKED}, and should a ref commit between this statement's snapshot and
 * its delete anyway, the refs' foreign key fails the delete (SQLSTATE 23503) and the batch is rolled
 * back: nothing referred to is ever lost.
 */
public final class AttachmentRetention implements RetentionStep {

    public static final Duration DEFAULT_GRACE = Duration.ofHours(1);

    private final Duration grace;
    private final Clock clock;

    public AttachmentRetention() {
        this(DEFAULT_GRACE, Clock.systemUTC());
    }

    /** @param grace how long content stays after its last use with no ref left; at least a minute */
    public AttachmentRetention(Duration grace, Clock clock) {
        if (grace == null || grace.compareTo(Duration.ofMinutes(1)) < 0) {
            throw new IllegalArgumentException("grace must be at least 1 minute, got " + grace);
        }
        this.grace = grace;
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public String table() {
        return "email_attachment_content";
    }

    /** Content is not history: its own grace decides, not the history's {@code cutoff}. */
    @Override
    public int deleteOld(DSLContext tx, Instant cutoff, int limit) {
        return deleteUnreferenced(tx, clock.instant().minus(grace), limit);
    }

    /** Deletes up to {@code limit} content rows with no ref that were last used before {@code unusedSince}. */
    public static int deleteUnreferenced(DSLContext tx, Instant unusedSince, int limit) {
        var c = EMAIL_ATTACHMENT_CONTENT;
        var o = EMAIL_ATTACHMENT_CONTENT.as("o");
        var r = EMAIL_ATTACHMENT_REF;
        return tx.deleteFrom(c).where(c.SHA256.in(
                        select(o.SHA256).from(o)
                                .where(o.LAST_USED_AT.lt(unusedSince))
                                .and(DSL.notExists(selectOne().from(r).where(r.SHA256.eq(o.SHA256))))
                                .orderBy(o.LAST_USED_AT)
                                .limit(limit)
                                .forUpdate().skipLocked()))
                .execute();
    }
}
