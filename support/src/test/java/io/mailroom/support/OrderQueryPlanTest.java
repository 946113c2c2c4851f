package io.mailroom.support;

import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The support queries use their indexes on a history table big enough for the planner to care:
 * "emails of order N" the aggregate index, a status list the index its status is served by
 * ({@code EffectHistory.statusQuery}). The plans are those of
 * the exact statements the service runs (built by {@link SupportStore}).
 */
class OrderQueryPlanTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @BeforeAll
    static void load() {
        HistoryLoader.load(pg.dsl(), 30_000);
    }

    /** A sort of every row found (an incremental sort of ties within one time is a page's worth). */
    private static final String FULL_SORT = "(?m)^\\s*(->\\s+)?Sort\\s+\\(";

    static String explain(org.jooq.Query query) {
        return pg.dsl().fetch("EXPLAIN " + pg.dsl().renderInlined(query)).stream()
                .map(r -> r.get(0, String.class)).collect(Collectors.joining("\n"));
    }

    @Test
    void emailsOfAnOrderAreFoundThroughTheAggregateIndex() {
        String plan = explain(new SupportStore().aboutQuery(pg.dsl(), new About("order", "4242"), SupportService.MAX_EMAILS_PER_ENTITY + 1));
        assertThat(plan).contains("outbox_effect_aggregate_idx").doesNotContain("Seq Scan on outbox_effect");
        // and the service's answer for that order is complete
        AboutEmails order = new SupportService(pg.dataSource()).emailsOfOrder("4242");
        assertThat(order.emails()).extracting(EmailView::key)
                .containsExactly("email-order-4242", "email-order-4242-shipped", "email-order-4242-resend-1");
        assertThat(order.emails().getFirst().resentAs()).containsExactly("email-order-4242-resend-1");
        assertThat(order.emails().getFirst().recipient()).isEqualTo("customer4242@example.com");
        assertThat(order.emails()).allSatisfy(e -> assertThat(e.timeline()).hasSize(1));
    }

    @Test
    void aListOfFailedEmailsIsReadThroughTheExceptionIndex() {
        String plan = explain(new SupportStore().statusQuery(pg.dsl(),
                new EmailFilter(EmailStatus.FAILED, null, null, null, null, 50), 51));
        assertThat(plan).contains("outbox_effect_exception_idx").doesNotContain("Seq Scan on outbox_effect").doesNotContainPattern(FULL_SORT);
        assertThat(new SupportService(pg.dataSource()).emails(EmailFilter.of(EmailStatus.FAILED)).emails()).hasSize(50)
                .allSatisfy(e -> assertThat(e.status()).isEqualTo(EmailStatus.FAILED));
    }

    @Test
    void aListOfSentEmailsIsReadNewestQueuedFirstThroughTheTimeIndex() {
        String plan = explain(new SupportStore().statusQuery(pg.dsl(),
                new EmailFilter(EmailStatus.SENT, null, null, null, null, 50), 51));
        assertThat(plan).contains("outbox_effect_created_idx").doesNotContain("Seq Scan on outbox_effect").doesNotContainPattern(FULL_SORT);
        SupportService service = new SupportService(pg.dataSource());
        EmailPage first = service.emails(EmailFilter.of(EmailStatus.SENT));
        assertThat(first.emails()).hasSize(50).allSatisfy(e -> assertThat(e.status()).isEqualTo(EmailStatus.SENT));
        // the next page continues where the first ended, by the time each was queued
        EmailPage second = service.emails(new EmailFilter(EmailStatus.SENT, null, null, null,
                Cursor.decode("cursor", first.nextCursor()), 50));
        assertThat(second.emails()).hasSize(50);
        assertThat(second.emails().getFirst().createdAt()).isBeforeOrEqualTo(first.emails().getLast().createdAt());
        assertThat(second.emails()).extracting(EmailView::key).doesNotContainAnyElementsOf(
                first.emails().stream().map(EmailView::key).toList());
    }

    @Test
    void aListOfWaitingEmailsIsReadThroughTheQueueNotTheHistory() {
        String plan = explain(new SupportStore().statusQuery(pg.dsl(),
                new EmailFilter(EmailStatus.PENDING, null, null, null, null, 50), 51));
        assertThat(plan).contains("outbox_message").doesNotContain("Seq Scan on outbox_effect");
    }
}
