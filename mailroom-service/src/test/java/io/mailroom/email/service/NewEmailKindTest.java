package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.BodyPart;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeMultipart;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A new kind of email with no Java: a template folder and one line of topic configuration, enqueued
 * through the business API, sent by the real dispatcher service to GreenMail, and the message as a
 * mail client parses it.
 */
class NewEmailKindTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private static void shippingTemplate(Path dir) throws Exception {
        Path t = Files.createDirectories(dir.resolve("order_delivered"));
        Files.writeString(t.resolve("subject.peb"), "{{ t(\"subject\", {\"id\": order.id}) }}");
        Files.writeString(t.resolve("text.peb"), """
                {% extends "_layouts/text.peb" %}
                {% block content %}
                {{ t("body", {"name": customer.name, "carrier": order.carrier}) }}
                {{ t("total") }}: {{ order.total | money(order.currency) }}
                {% endblock %}
                """);
        Files.writeString(t.resolve("html.peb"), """
                {% extends "_layouts/html.peb" %}
                {% block content %}
                <h1>{{ t("subject", {"id": order.id}) }}</h1>
                <p>{{ t("body", {"name": customer.name, "carrier": order.carrier}) }}</p>
                <p class="total">{{ t("total") }}: {{ order.total | money(order.currency) }}</p>
                {% endblock %}
                """);
        Files.writeString(t.resolve("messages.properties"), """
                subject=Order #{id} has shipped
                body=Good news, {name}: {carrier} has your parcel.
                total=Total
                """);
        Files.writeString(t.resolve("messages_vi.properties"), """
                subject=Đơn hàng #{id} đã được giao cho đơn vị vận chuyển
                body=Tin vui, {name}: {carrier} đang giữ bưu kiện của bạn.
                total=Tổng cộng
                """);
    }

    private Map<String, String> env(Path templates, String topics) {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_TEMPLATES_DIR", templates.toString());
        env.put("MAILROOM_TOPICS", topics);
        return env;
    }

    @Test
    void aTemplateFolderAndOneConfigurationLineMakeANewEmailKind(@TempDir Path templates) throws Exception {
        shippingTemplate(templates);
        Map<String, String> env = env(templates, "email.order_delivered = order_delivered from=\"Giao hàng <ship@example.com>\"");

        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());
            pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), OutgoingEmail.template("order_delivered")
                    .to("anh@example.com", "Nguyễn Thị Ánh")
                    .replyTo("help@example.com", "Hỗ trợ")
                    .locale("vi")
                    .about("order", "102")
                    .idempotencyKey("email-order-102-delivered")
                    .header("X-Campaign", "shipping")
                    .data(Map.of("customer", Map.of("name", "Nguyễn Thị Ánh"),
                            "order", Map.of("id", "102", "carrier", "<VNPost> & Co", "currency", "VND",
                                    "total", new BigDecimal("535000"))))
                    .build()));

            await().atMost(Duration.ofSeconds(20)).until(() -> greenMail.getReceivedMessages().length == 1);
            await().atMost(Duration.ofSeconds(10)).until(() -> "done".equals(pg.dsl()
                    .fetchSingle("SELECT status FROM outbox_message WHERE idempotency_key = 'email-order-102-delivered'").get(0, String.class)));
        }

        MimeMessage m = greenMail.getReceivedMessages()[0];
        assertThat(m.getSubject()).isEqualTo("Đơn hàng #102 đã được giao cho đơn vị vận chuyển");
        assertThat(((InternetAddress) m.getFrom()[0]).getPersonal()).isEqualTo("Giao hàng");
        assertThat(((InternetAddress) m.getFrom()[0]).getAddress()).isEqualTo("ship@example.com");
        assertThat(((InternetAddress) m.getReplyTo()[0]).getAddress()).isEqualTo("help@example.com");
        assertThat(((InternetAddress) m.getAllRecipients()[0]).getPersonal()).isEqualTo("Nguyễn Thị Ánh");
        assertThat(m.getHeader("X-Campaign")).containsExactly("shipping");

        MimeMultipart alternative = (MimeMultipart) m.getContent();
        List<BodyPart> parts = List.of(alternative.getBodyPart(0), alternative.getBodyPart(1));
        assertThat(parts.get(0).isMimeType("text/plain")).isTrue();
        assertThat(parts.get(1).isMimeType("text/html")).isTrue();
        assertThat(parts.get(0).getContentType()).containsIgnoringCase("charset=UTF-8");
        String text = (String) parts.get(0).getContent();
        String html = (String) parts.get(1).getContent();
        assertThat(text).contains("Tin vui, Nguyễn Thị Ánh: <VNPost> & Co đang giữ bưu kiện của bạn.")
                .contains("Tổng cộng: 535.000")
                .contains("Đây là email tự động"); // the built-in shared layout's neutral footer, in Vietnamese
        assertThat(html).contains("Tin vui, Nguyễn Thị Ánh: &lt;VNPost&gt; &amp; Co đang giữ bưu kiện của bạn.")
                .doesNotContain("<VNPost>")
                .containsPattern("<p class=\"total\" style=\"font-size: 15px;[^\"]*font-weight: bold;")
                .containsPattern("<h1 style=\"font-size: 20px;")
                .contains("<html lang=\"vi\">");

        String version = pg.dsl().fetchSingle("SELECT descriptor::text FROM idempotency_record WHERE effect_key = 'email-order-102-delivered'")
                .get(0, String.class);
        assertThat(version).contains("order_delivered@");
    }

    @Test
    void aTopicNamingATemplateTheCatalogueLacksIsRefusedAtStart(@TempDir Path templates) {
        Map<String, String> env = env(templates, "email.welcome = welcome");
        assertThatThrownBy(() -> DispatcherService.start(ServiceConfig.fromEnv(env)))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> {
                    assertThat(e.setting()).isEqualTo("MAILROOM_TOPICS");
                    assertThat(e.getMessage()).contains("email.welcome").contains("'welcome'").contains("is not in the catalogue");
                });
    }

    @Test
    void aTemplateThatDoesNotCompileIsRefusedAtStartNamingTheFile(@TempDir Path templates) throws Exception {
        shippingTemplate(templates);
        Files.writeString(templates.resolve("order_delivered/html.peb"), "{% if order.id %}never closed");
        Map<String, String> env = env(templates, "email.order_delivered = order_delivered");
        assertThatThrownBy(() -> DispatcherService.start(ServiceConfig.fromEnv(env)))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> {
                    assertThat(e.setting()).isEqualTo("MAILROOM_TEMPLATES_DIR");
                    assertThat(e.getMessage()).contains("order_delivered/html.peb");
                });
    }

    /** Mailroom ships layouts, no email: a dispatcher given no template directory has nothing to serve. */
    @Test
    void aDispatcherWithNoTemplateToServeIsRefusedAtStartNamingTheSetting(@TempDir Path templates) {
        Map<String, String> env = env(templates, null);
        env.remove("MAILROOM_TOPICS");
        env.remove("MAILROOM_TEMPLATES_DIR");
        assertThatThrownBy(() -> DispatcherService.start(ServiceConfig.fromEnv(env)))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> {
                    assertThat(e.setting()).isEqualTo("MAILROOM_TEMPLATES_DIR");
                    assertThat(e.getMessage()).contains("no email template to serve");
                });
    }

    @Test
    void badTopicLinesAreRefusedNamingTheLine(@TempDir Path templates) {
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env(templates, "email.x")))
                .hasMessageContaining("expected 'topic = template'");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env(templates, "email.x = x;email.x = y")))
                .hasMessageContaining("configured twice");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env(templates, "email.x = x colour=blue")))
                .hasMessageContaining("unknown or empty setting 'colour=blue'");
        // a topic on a transport the service has no settings for: refused naming the setting and the topic
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env(templates, "email.x = x transport=http")))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).startsWith("MAILROOM_HTTP_"))
                .hasMessageContaining("(topics email.x send through http)");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env(templates, "email.x = x from=\"nobody\"")))
                .hasMessageContaining("from of topic email.x");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env(templates.resolve("none"), "email.x = x")))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("MAILROOM_TEMPLATES_DIR"));
    }
}
