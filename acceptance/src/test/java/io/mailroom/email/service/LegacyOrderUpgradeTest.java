package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.acceptance.Shop;
import io.mailroom.orders.OrderService;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Upgrade safety for the shop: an order confirmation the shop enqueued before it used the email API
 * (an order document without {@code "v"}), still queued when the dispatcher is upgraded to one whose
 * library knows no order, is sent from the shop's template, because the shop's jar on the
 * dispatcher's class path brings its reader ({@code LegacyOrderPayload}, found by ServiceLoader).
 */
class LegacyOrderUpgradeTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    @Test
    void anOrderDocumentQueuedBeforeTheEmailApiIsSentFromTheShopsTemplate() throws Exception {
        pg.dsl().transaction(cfg -> new OutboxEnqueuer().enqueue(cfg.dsl(), NewMessage.of(OrderService.TOPIC,
                "order", "535", "email-order-535", """
                        {"orderId":535,"customerEmail":"anh@example.com","customerName":"Nguyễn Thị Ánh","currency":"EUR",
                         "total":"2.00","createdAt":"2026-12-02T10:00:00Z",
                         "lines":[{"lineNo":1,"sku":"X","name":"Pin","quantity":2,"unitPrice":"1.00","lineTotal":"2.00"}]}""")));
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_TEMPLATES_DIR", Shop.templatesDir().toString()); // the shop's templates, not the service tests'
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            await().atMost(Duration.ofSeconds(20)).until(() -> "done".equals(pg.dsl().select(OUTBOX_MESSAGE.STATUS)
                    .from(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-order-535")).fetchOne(OUTBOX_MESSAGE.STATUS)));
        }
        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).hasSize(1);
        assertThat(received[0].getSubject()).isEqualTo("Your order #535 is confirmed");
        assertThat(received[0].getAllRecipients()[0].toString()).contains("anh@example.com");
    }
}
