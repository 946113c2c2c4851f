package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One service, two transports: the default (SMTP, to GreenMail) for every topic that names none,
 * and the HTTP mail API for the topic whose line says {@code transport=http}. Each topic is sent
 * through its own transport only, each transport's breaker is its own, and readiness shows both.
 */
class TransportPerTopicTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private WireMockServer provider;

    @BeforeEach
    void provider() {
        provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1"));
        provider.start();
        provider.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(202)
                .withHeader("Content-Type", "application/json").withBody("{\"id\":\"prov-1\"}")));
    }

    @AfterEach
    void stop() {
        provider.stop();
    }

    private static OutgoingEmail confirmation(String key) {
        return OutgoingEmail.template("receipt").to("anh@example.com", "Nguyễn Thị Ánh").locale("vi")
                .about("order", "102").idempotencyKey(key)
                .data(Map.of("customer", Map.of("name", "Nguyễn Thị Ánh"),
                        "order", Map.of("id", "102", "currency", "VND", "total", 90000, "createdAt", "2026-12-03T09:15:00Z",
                                "lines", List.of(Map.of("sku", "CF-1", "name", "Cà phê", "quantity", 2, "amount", 90000)))))
                .build();
    }

    @Test
    void aTopicLineNamingTheHttpTransportSendsThatTopicThroughItAndTheRestThroughTheDefault() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_HTTP_BASE_URL", provider.baseUrl());
        env.put("MAILROOM_HTTP_TOKEN", "tok_test");
        // the default topic email.receipt stays on SMTP; a second topic for the same template goes by HTTP
        env.put("MAILROOM_TOPICS", "shop.receipt = receipt transport=http from=\"Receipts <receipts@example.com>\"");

        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            assertThat(service.transports()).containsOnlyKeys("smtp", "http");
            assertThat(service.transport().name()).isEqualTo("smtp");

            EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());
            pg.dsl().transaction(cfg -> {
                outbox.enqueue(cfg.dsl(), confirmation("email-order-102"));
                outbox.enqueue(cfg.dsl(), OutgoingEmail.template("receipt").topic("shop.receipt")
                        .to("anh@example.com", "Nguyễn Thị Ánh").locale("vi").about("order", "102")
                        .idempotencyKey("receipt-order-102").data(confirmation("x").data()).build());
            });

            await().atMost(Duration.ofSeconds(20)).until(() -> pg.dsl().fetchCount(
                    pg.dsl().selectFrom("outbox_message").where("status = 'done'")) == 2);

            Map<String, Object> ready = service.readiness();
            assertThat(ready.get("status")).isEqualTo("UP");
            assertThat(ready.get("transport")).isEqualTo("smtp");
            @SuppressWarnings("unchecked")
            Map<String, Object> each = (Map<String, Object>) ready.get("transports");
            assertThat(each).containsOnlyKeys("smtp", "http");
            // the dispatcher's registry row names both transports and their breakers, for support's dispatchers page
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(io.mailroom.outbox.admin.Dispatchers.list(pg.dsl())
                    .dispatchers()).singleElement().satisfies(d -> {
                        assertThat(d.topics()).contains("shop.receipt", "email.receipt");
                        assertThat(io.mailroom.email.resilience.BreakerReport.parse(d.details()))
                                .extracting(io.mailroom.email.resilience.BreakerReport.State::transport)
                                .containsExactlyInAnyOrder("smtp", "http");
                    }));
        }

        // through SMTP: exactly the default topic's email
        assertThat(greenMail.getReceivedMessages()).hasSize(1);
        assertThat(greenMail.getReceivedMessages()[0].getHeader("Message-ID")[0]).contains("email-order-102");
        // through HTTP: exactly the topic that named it, with its own sender and its own idempotency key
        List<LoggedRequest> calls = provider.findAll(postRequestedFor(urlEqualTo("/v1/emails")));
        assertThat(calls).hasSize(1);
        assertThat(calls.getFirst().getHeader("Idempotency-Key")).isEqualTo("receipt-order-102");
        JsonNode body = new ObjectMapper().readTree(calls.getFirst().getBodyAsString());
        assertThat(body.get("from").get("email").asText()).isEqualTo("receipts@example.com");
        assertThat(body.get("subject").asText()).contains("102");

        // the history says which transport sent which
        assertThat(pg.dsl().fetch("SELECT idempotency_key, detail->>'transport' FROM outbox_attempt ORDER BY idempotency_key")
                .intoMap(r -> r.get(0, String.class), r -> r.get(1, String.class)))
                .containsEntry("email-order-102", "smtp").containsEntry("receipt-order-102", "http");
    }
}
