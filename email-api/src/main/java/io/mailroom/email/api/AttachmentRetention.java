package io.mailroom.email.api;

import io.mailroom.outbox.maintenance.EffectPresence;
import io.mailroom.outbox.maintenance.RetentionStep;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_CONTENT;
import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_REF;
import static org.jooq.impl.DSL.select;
import static org.jooq.impl.DSL.selectOne;

/**
 * The retention of attachments, one of the owners' steps the history cleaner runs: an email's refs
 * leave with its effect, in the transaction that deletes the effect ({@link #deleteWithEffects});
 * the own pass takes refs whose effect is gone otherwise, then the content that no email refers to
 * any more (its refs gone with their effects, or removed by an erasure) once unused for
 * {@code grace}.
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

    /** The refs of the deleted effects, whatever their age: they are the effects' own rows. */
    @Override
    public int deleteWithEffects(DSLContext tx, List<DeletedEffect> effects, Instant cutoff) {
        return AttachmentStore.erase(tx, effects.stream().map(DeletedEffect::idempotencyKey).toList());
    }

    /**
     * Refs without an effect (an enqueue writes the effect and its refs in one transaction, so a
     * committed ref without one is left over), then content unused for the grace period, not the
     * history's {@code cutoff}: content is not history.
     */
    @Override
    public int deleteOld(DSLContext tx, Instant cutoff, int limit) {
        var r = EMAIL_ATTACHMENT_REF;
        var o = EMAIL_ATTACHMENT_REF.as("o");
        int refs = tx.deleteFrom(r).where(DSL.row(r.IDEMPOTENCY_KEY, r.POSITION).in(
                        select(o.IDEMPOTENCY_KEY, o.POSITION).from(o)
                                .where(EffectPresence.noEffectWithKey(o.IDEMPOTENCY_KEY))
                                .limit(limit)
                                .forUpdate().skipLocked()))
                .execute();
        return refs + deleteUnreferenced(tx, clock.instant().minus(grace), limit);
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
