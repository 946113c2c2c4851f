package io.mailroom.support.cli;

import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.support.SupportJson;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;
import static org.assertj.core.api.Assertions.assertThat;

/** The CLI's email and order views print what each email was rendered to; {@code email --text} prints its text part. */
class RenderingCliTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final String TOPIC = "email.order_confirmation";

    record Run(int code, String out, String err) {
    }

    private Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(out), new PrintWriter(err), args);
        return new Run(code, out.toString(), err.toString());
    }

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, audit_log, email_rendering");
    }

    private EnqueuedMessage sent(long orderId, String subject, String text) {
        EnqueuedMessage m = pg.dsl().transactionResult(cfg -> new OutboxEnqueuer(null, false).enqueue(cfg.dsl(),
                NewMessage.of(TOPIC, "order", Long.toString(orderId), "email-order-" + orderId,
                        "{\"customerEmail\":\"cli" + orderId + "@example.com\",\"customerName\":\"Cli User\"}")));
        if (subject != null) {
            var r = EMAIL_RENDERING;
            pg.dsl().insertInto(r, r.IDEMPOTENCY_KEY, r.MESSAGE_ID, r.MESSAGE_CREATED_AT, r.ATTEMPT, r.TEMPLATE,
                            r.TEMPLATE_VERSION, r.LOCALE, r.SUBJECT, r.TEXT_PART, r.HTML_PART)
                    .values(m.idempotencyKey(), m.id(), m.createdAt(), 1, "order_confirmation", "order_confirmation@abcdef0123456789",
                            "vi", subject, text, "<p>html</p>")
                    .execute();
        }
        DispatcherConfig config = DispatcherConfig.builder().workerId("cli-test").listenForNotifications(false).build();
        new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config, Map.of(TOPIC, (msg, ctx) -> Outcome.done())).runOnce();
        return m;
    }

    @Test
    void theEmailViewPrintsTemplateVersionLocaleAndSubject_andTheTextPartOnRequest() throws Exception {
        sent(102, "Đơn hàng #102 của bạn đã được xác nhận", "Cảm ơn bạn!\n\u001b[31mred\u001b[0m\tTổng: 535.000 ₫\n");

        Run plain = run("email", "email-order-102");
        assertThat(plain.code()).as(plain.err()).isZero();
        assertThat(plain.out())
                .contains("template:    order_confirmation, version order_confirmation@abcdef0123456789, locale vi (attempt 1, ")
                .contains("subject:     Đơn hàng #102 của bạn đã được xác nhận")
                .doesNotContain("Cảm ơn bạn!");

        Run text = run("email", "email-order-102", "--text");
        assertThat(text.code()).as(text.err()).isZero();
        assertThat(text.out()).contains("----- text part of email-order-102 -----\nCảm ơn bạn!\n [31mred [0m\tTổng: 535.000 ₫\n"
                + "----- end of text part -----").doesNotContain("\u001b");

        Run json = run("--json", "email", "email-order-102");
        assertThat(SupportJson.mapper().readTree(json.out()).get("rendering").get("locale").asText()).isEqualTo("vi");
    }

    @Test
    void theOrderViewPrintsEachEmailsRendering_andAnEmailWithoutOneSaysSo() {
        sent(103, "Your order #103 is confirmed", "Thanks");

        Run order = run("emails", "--order", "103");
        assertThat(order.code()).as(order.err()).isZero();
        assertThat(order.out()).contains("Sent as email-order-103: order_confirmation, version order_confirmation@abcdef0123456789, locale vi")
                .contains("  subject: Your order #103 is confirmed");

        sent(104, null, null);
        Run none = run("email", "email-order-104", "--text");
        assertThat(none.code()).as(none.err()).isZero();
        assertThat(none.out()).doesNotContain("template:").contains("(no rendering of email-order-104 is stored");
    }
}
