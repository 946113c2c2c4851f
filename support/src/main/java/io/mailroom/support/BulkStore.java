package io.mailroom.support;

import io.mailroom.db.jooq.tables.records.BulkActionRecord;
import org.jooq.DSLContext;
import org.jooq.JSONB;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.BULK_ACTION;

/** Support's own table of bulk actions ({@code bulk_action}, V21): one row per run with its progress. */
final class BulkStore {

    private static final io.mailroom.db.jooq.tables.BulkAction B = BULK_ACTION;
    private static final org.jooq.Field<java.time.Instant> NOW =
            org.jooq.impl.DSL.field(org.jooq.impl.DSL.raw("now()"), org.jooq.impl.SQLDataType.INSTANT);

    long insert(DSLContext tx, String action, Map<String, String> filter, int confirmed, int matched, Actor actor,
                String reason) {
        return tx.insertInto(B, B.ACTION, B.FILTER, B.CONFIRMED, B.MATCHED, B.ACTOR, B.ROLE, B.REASON)
                .values(action, JSONB.valueOf(SupportJson.write(filter)), confirmed, matched, actor.name(),
                        actor.role().word(), reason)
                .returning(B.ID).fetchSingle(B.ID);
    }

    void progress(DSLContext tx, long id, int applied, int skipped, int busy) {
        tx.update(B).set(B.APPLIED, applied).set(B.SKIPPED, skipped).set(B.BUSY, busy)
                .set(B.UPDATED_AT, NOW)
                .where(B.ID.eq(id)).execute();
    }

    void finish(DSLContext tx, long id, String state, String error) {
        tx.update(B).set(B.STATE, state).set(B.ERROR, error).set(B.UPDATED_AT, NOW)
                .set(B.FINISHED_AT, NOW).where(B.ID.eq(id)).execute();
    }

    BulkRun get(DSLContext tx, long id) {
        BulkActionRecord r = tx.selectFrom(B).where(B.ID.eq(id)).fetchOne();
        return r == null ? null : run(r);
    }

    List<BulkRun> recent(DSLContext tx, int limit) {
        return tx.selectFrom(B).orderBy(B.ID.desc()).limit(limit).fetch(BulkStore::run);
    }

    /** Runs still marked running that made no progress for {@code quiet}: their process stopped. */
    int markInterrupted(DSLContext tx, Duration quiet) {
        return tx.update(B).set(B.STATE, "interrupted").set(B.FINISHED_AT, NOW)
                .set(B.ERROR, "the support server that ran it stopped; run it again for what is left")
                .where(B.STATE.eq("running"))
                .and(org.jooq.impl.DSL.condition("{0} < now() - make_interval(secs => {1})", B.UPDATED_AT,
                        org.jooq.impl.DSL.val(quiet.toSeconds())))
                .execute();
    }

    private static BulkRun run(BulkActionRecord r) {
        Map<String, String> filter = new LinkedHashMap<>();
        SupportJson.tree(r.getFilter().data()).properties().forEach(e -> filter.put(e.getKey(), e.getValue().asText()));
        return new BulkRun(r.getId(), r.getAction(), filter, r.getConfirmed(), r.getMatched(), r.getApplied(), r.getSkipped(),
                r.getBusy(), r.getState(), r.getActor(), r.getReason(), r.getError(), r.getCreatedAt(), r.getUpdatedAt(),
                r.getFinishedAt());
    }
}
