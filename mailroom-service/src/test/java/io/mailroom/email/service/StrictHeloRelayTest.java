package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A relay with strict HELO rules refuses {@code EHLO localhost} at every RCPT with
 * {@code 504 5.5.2 Helo command rejected}. That is about our session, not the recipient: the
 * emails must wait (pending, attempts not counted), readiness must say why, and with a fully
 * qualified {@code MAILROOM_SMTP_HELO_NAME} they are sent.
 */
class StrictHeloRelayTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void aRefusedHeloNameKeepsTheEmailsWaitingAndTheServiceNotReadyUntilAFullyQualifiedNameIsSet() throws Exception {
        try (StrictHeloSmtpServer relay = new StrictHeloSmtpServer()) {
            Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), relay.port());
            env.put("MAILROOM_SMTP_HELO_NAME", "localhost");
            env.put("MAILROOM_BREAKER_OPEN_WAIT", "1s");
            try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
                enqueue("email-helo-1", "ann@example.com");
                enqueue("email-helo-2", "bob@example.com");
                await().atMost(Duration.ofSeconds(20)).until(() -> service.transport().sessionRefusal().isPresent());
                // several refusals (the probes after each 1 s open wait), none burns an attempt
                await().atMost(Duration.ofSeconds(20)).until(() -> relay.refusedRcpts.get() >= 3);

                HttpResponse<String> ready = get(service.port(), "/health/ready");
                JsonNode body = new ObjectMapper().readTree(ready.body());
                assertThat(ready.statusCode()).as(ready.body()).isEqualTo(503);
                assertThat(body.path("status").asText()).isEqualTo("DOWN");
                assertThat(body.path("cannotSend").asText()).contains("504 5.5.2")
                        .contains("relay refused our HELO name 'localhost'").contains("set MAILROOM_SMTP_HELO_NAME");
                for (String key : new String[]{"email-helo-1", "email-helo-2"}) {
                    Record row = row(key);
                    assertThat(row.get(OUTBOX_MESSAGE.STATUS)).as(key).isIn("pending", "running");
                    assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).as(key + ": no attempt burnt").isLessThanOrEqualTo(1);
                }
                assertThat(relay.received).isEmpty();
                assertThat(relay.helos).containsOnly("localhost");
            }

            // the operator sets the name the log asked for; the same emails go out
            env.put("MAILROOM_SMTP_HELO_NAME", "mailer.shop.example");
            try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> relay.received.size() == 2);
                await().atMost(Duration.ofSeconds(10)).until(() -> "done".equals(row("email-helo-1").get(OUTBOX_MESSAGE.STATUS))
                        && "done".equals(row("email-helo-2").get(OUTBOX_MESSAGE.STATUS)));
                assertThat(relay.received).extracting(StrictHeloSmtpServer.Received::helo).containsOnly("mailer.shop.example");
                assertThat(get(service.port(), "/health/ready").statusCode()).isEqualTo(200);
            }
        }
    }

    @Test
    void withoutTheSettingTheHeloNameIsAFullyQualifiedOneWhichTheStrictRelayAccepts() throws Exception {
        try (StrictHeloSmtpServer relay = new StrictHeloSmtpServer()) {
            Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), relay.port());
            try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
                assertThat(service.transports().get("smtp").delegate()).isNotNull();
                enqueue("email-helo-default", "cy@example.com");
                await().atMost(Duration.ofSeconds(20)).until(() -> relay.received.size() == 1);
                assertThat(relay.received.get(0).helo()).contains(".").isNotEqualTo("localhost");
            }
        }
    }

    private Record row(String key) {
        return pg.dsl().select(OUTBOX_MESSAGE.STATUS, OUTBOX_MESSAGE.ATTEMPTS).from(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key)).fetchSingle();
    }

    private void enqueue(String key, String to) {
        pg.dsl().transaction(c -> new io.mailroom.email.api.EmailOutbox(new io.mailroom.outbox.OutboxEnqueuer()).enqueue(c.dsl(),
                io.mailroom.email.api.OutgoingEmail.template("welcome").to(to, "Ann").about("account", key).idempotencyKey(key)
                        .data(Map.of("customer", Map.of("name", "Ann"))).build()));
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
