package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A query parameter a route does not read is a 400 naming it and listing the ones it accepts, on
 * every API and console route: {@code GET /api/emails?recipient=...} used to answer every email,
 * as if the filter had been applied.
 */
class UnknownQueryParameterTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String OPERATOR = "olga-operator-token-0123456789";

    private static SupportServer server;
    private static Http http;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("olga:operator:" + OPERATOR).build(), List::of);
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void emails() {
        TestMail.truncate(pg.dsl());
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.FAILED);
    }

    private static JsonNode refused(String path, String parameter) {
        HttpResponse<String> r = http.get(path, Http.bearer(OPERATOR));
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(400);
        JsonNode error = Http.json(r);
        assertThat(error.get("code").asText()).isEqualTo("bad_request");
        assertThat(error.get("parameter").asText()).isEqualTo(parameter);
        return error;
    }

    @Test
    void theApiRefusesAnUnknownParameterNamingItAndTheAcceptedOnes() {
        assertThat(refused("/api/emails?status=failed&recipent=ann102@example.com", "recipent").get("error").asText())
                .isEqualTo("unknown parameter recipent; accepted: about, cursor, delivery, domain, error, key, keyPrefix, limit, "
                        + "olderThan, providerMessageId, recipient, since, status, tag, template, topic, until");
        assertThat(refused("/api/delivery?delivery=bounced&since=1h", "since").get("error").asText())
                .isEqualTo("unknown parameter since; accepted: cursor, delivery, limit");
        assertThat(refused("/api/delivery/orphans?address=x", "address").get("error").asText())
                .isEqualTo("unknown parameter address; accepted: before, limit");
        assertThat(refused("/api/suppressions?lifted=true&email=ann@example.com", "email").get("error").asText())
                .isEqualTo("unknown parameter email; accepted: address, before, lifted, limit");
        assertThat(refused("/api/emails/email-order-102?timeline=false", "timeline").get("error").asText())
                .isEqualTo("unknown parameter timeline; this route takes no query parameters");
        refused("/api/orders/102/emails?status=failed", "status");
        refused("/api/stats?window=1h", "window");
        // a name that is not a plain word is not echoed
        refused("/api/emails?%3Cscript%3E=1", "query");
        HttpResponse<String> post = http.postJson("/api/emails/email-order-102/retry?force=true", null, Http.bearer(OPERATOR));
        assertThat(post.statusCode()).as(post.body()).isEqualTo(400);
        assertThat(Http.json(post).get("parameter").asText()).isEqualTo("force");
    }

    @Test
    void theAcceptedParametersStillWork_andNothingChangedOnARefusal() {
        HttpResponse<String> ok = http.get("/api/emails?status=failed&limit=10&since=1h", Http.bearer(OPERATOR));
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(Http.json(ok).get("emails")).hasSize(1);
        assertThat(http.get("/api/suppressions?address=ann@example.com&lifted=true", Http.bearer(OPERATOR)).statusCode()).isEqualTo(200);
        assertThat(http.get("/api/delivery?delivery=bounced&limit=5", Http.bearer(OPERATOR)).statusCode()).isEqualTo(200);

        http.postJson("/api/emails/email-order-102/retry?force=true", null, Http.bearer(OPERATOR));
        assertThat(Http.json(http.get("/api/emails/email-order-102", Http.bearer(OPERATOR))).get("status").asText())
                .isEqualTo("failed");
    }

    @Test
    void theConsoleRefusesAnUnknownParameterWithAnErrorPage() {
        String cookie = ConsoleLogin.signIn(http, OPERATOR);
        for (Map.Entry<String, String> c : Map.of(
                "/console/emails?status=failed&recipent=ann102@example.com", "recipent",
                "/console/about?type=order&id=102&key=x", "key",
                "/console/suppressions?addr=ann@example.com", "addr",
                "/console/queue?refresh=5", "refresh",
                "/console/emails/email-order-102?tab=history", "tab").entrySet()) {
            HttpResponse<String> r = http.get(c.getKey(), "Cookie", "mailroom_session=" + cookie);
            assertThat(r.statusCode()).as(c.getKey()).isEqualTo(400);
            assertThat(r.body()).as(c.getKey()).contains("unknown parameter " + c.getValue());
        }
        assertThat(http.get("/console/emails?status=failed&since=1h&olderThan=1m", "Cookie", "mailroom_session=" + cookie)
                .statusCode()).isEqualTo(200);
        assertThat(http.get("/console/about?type=order&id=102", "Cookie", "mailroom_session=" + cookie).statusCode()).isEqualTo(200);
        assertThat(http.get("/console/login?next=%2Fconsole%2Fqueue").statusCode()).isIn(200, 303);
    }
}
