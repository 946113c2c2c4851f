package io.mailroom.email.api;

import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;
import java.util.function.UnaryOperator;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT_TERM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Several recipients and tags: each refusal names its field and limit, and the envelope's bytes. */
class RecipientsAndTagsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());

    private static OutgoingEmail.Builder invoice() {
        return OutgoingEmail.template("invoice").to("an@example.com", "An").idempotencyKey("email-invoice-7").about("invoice", "7")
                .data(Map.of("n", 7));
    }

    private static void refused(UnaryOperator<OutgoingEmail.Builder> edit, String field, String words) {
        assertThatThrownBy(() -> edit.apply(invoice()).build())
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> assertThat(e.field()).isEqualTo(field))
                .hasMessageContaining(words);
    }

    @Test
    void anEmailWithoneRecipientAndNoTagsKeepsTheVersion1BytesExactly() {
        assertThat(EmailOutbox.envelope(invoice().replyTo("help@shop.example", null).header("X-Campaign", "autumn").build()))
                .isEqualTo("{\"v\":1,\"template\":\"invoice\",\"locale\":\"en\",\"to\":{\"address\":\"an@example.com\",\"name\":\"An\"},"
                        + "\"replyTo\":{\"address\":\"help@shop.example\"},\"headers\":{\"X-Campaign\":\"autumn\"},\"data\":{\"n\":7}}");
    }

    @Test
    void ccBccAndTagsMakeVersion2WithKeysInTheContractsOrder() {
        OutgoingEmail email = invoice().to("bo@example.com", null).cc("billing@corp.example", "Billing")
                .bcc("audit@shop.example", null).replyTo("help@shop.example", null).header("X-Campaign", "autumn")
                .tag("category", "invoice").tag("plan", "pro").build();
        assertThat(EmailOutbox.envelope(email)).isEqualTo("{\"v\":2,\"template\":\"invoice\",\"locale\":\"en\","
                + "\"to\":[{\"address\":\"an@example.com\",\"name\":\"An\"},{\"address\":\"bo@example.com\"}],"
                + "\"cc\":[{\"address\":\"billing@corp.example\",\"name\":\"Billing\"}],"
                + "\"bcc\":[{\"address\":\"audit@shop.example\"}],"
                + "\"replyTo\":{\"address\":\"help@shop.example\"},\"headers\":{\"X-Campaign\":\"autumn\"},"
                + "\"tags\":{\"category\":\"invoice\",\"plan\":\"pro\"},\"data\":{\"n\":7}}");
        assertThat(email.to().address()).isEqualTo("an@example.com"); // the first, for callers of the one-recipient API
    }

    @Test
    void aTagAloneMakesVersion2_toIsThenAlwaysAnArray_emptyListsAreLeftOut() {
        assertThat(EmailOutbox.envelope(invoice().tag("category", "invoice").build())).isEqualTo(
                "{\"v\":2,\"template\":\"invoice\",\"locale\":\"en\",\"to\":[{\"address\":\"an@example.com\",\"name\":\"An\"}],"
                        + "\"tags\":{\"category\":\"invoice\"},\"data\":{\"n\":7}}"); // v2 leaves empty headers out
    }

    @Test
    void eachRecipientIsCheckedByMailboxRulesWithItsFieldNamed() {
        refused(b -> b.cc("ok@example.com", null).cc("not an address", null), "cc[1].address", "");
        refused(b -> b.bcc("x@example.com", "Evil\u202Ename"), "bcc[0].name", "");
        refused(b -> b.to("bo@example..com", null), "to[1].address", "");
        refused(b -> OutgoingEmail.template("invoice").idempotencyKey("k").cc("a@example.com", null), "to", "is missing");
    }

    @Test
    void anAddressTwiceAcrossToCcAndBccIsRefused_inAnyCase() {
        refused(b -> b.cc("AN@Example.com", null), "cc[0].address", "already a recipient as to");
        refused(b -> b.bcc("bo@example.com", null).cc("bo@example.com", null), "bcc[0].address", "already a recipient as cc[0]");
    }

    @Test
    void theListsAndTheTotalHaveLimitsNamedInTheRefusal() {
        refused(b -> many(b, "t", 50, OutgoingEmail.Builder::to), "to", "has 51 addresses; at most 50");
        refused(b -> many(b, "c", 51, OutgoingEmail.Builder::cc), "cc", "has 51 addresses; at most 50");
        refused(b -> many(b, "b", 51, OutgoingEmail.Builder::bcc), "bcc", "has 51 addresses; at most 50");
        refused(b -> many(many(b, "c", 50, OutgoingEmail.Builder::cc), "b", 50, OutgoingEmail.Builder::bcc),
                "to", "makes 101 recipients; at most 100 in all");
        // 100 in all is fine, and its terms fit the history
        OutgoingEmail full = many(many(invoice(), "c", 50, OutgoingEmail.Builder::cc), "b", 49, OutgoingEmail.Builder::bcc).build();
        assertThat(outbox.message(full).searchTerms()).hasSize(100 + 100 + 1);
    }

    private interface Add {
        OutgoingEmail.Builder add(OutgoingEmail.Builder b, String address, String name);
    }

    private static OutgoingEmail.Builder many(OutgoingEmail.Builder b, String prefix, int n, Add add) {
        for (int i = 0; i < n; i++) {
            add.add(b, prefix + i + "@d" + prefix + i + ".example", null);
        }
        return b;
    }

    @Test
    void tagsAreRefusedNamingTheFieldAndTheLimit() {
        refused(b -> b.tag("bad name", "x"), "tags", "tag name that is not 1-64 of A-Z");
        refused(b -> b.tag("x".repeat(65), "x"), "tags", "1-64");
        refused(b -> b.tag("plan", "a=b"), "tags.plan", "no space, '='");
        refused(b -> b.tag("plan", "a;b"), "tags.plan", "';'");
        refused(b -> b.tag("plan", "pro plan"), "tags.plan", "no space");
        refused(b -> b.tag("plan", "x".repeat(257)), "tags.plan", "longer than 256 characters");
        refused(b -> b.tag("plan", ""), "tags.plan", "has no value");
        refused(b -> b.tag("idempotency_key", "k"), "tags", "Mailroom sets itself");
        refused(b -> b.header("X-Mailroom-Tag", "plan=pro"), "headers.X-Mailroom-Tag", "tag(name, value)");
        refused(b -> {
            for (int i = 0; i < 11; i++) {
                b.tag("t" + i, "v");
            }
            return b;
        }, "tags", "has 11 tags; at most 10");
        assertThatThrownBy(() -> invoice().tag("plan", "a").tag("PLAN", "b"))
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> assertThat(e.field()).isEqualTo("tags.PLAN"));
        assertThat(invoice().tag("n".repeat(64), "v".repeat(256)).tag("ref", "inv/2026:7@a.b-c_d").build().tags()).hasSize(2);
    }

    @Test
    void everyRecipientAndEveryTagIsASearchTermKeptWithTheHistory() {
        OutgoingEmail email = invoice().to("Bo@Example.com", null).cc("billing@corp.example", null).bcc("audit@shop.example", null)
                .tag("category", "invoice").build();
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), email));
        assertThat(pg.dsl().select(OUTBOX_EFFECT_TERM.TERM).from(OUTBOX_EFFECT_TERM)
                .where(OUTBOX_EFFECT_TERM.IDEMPOTENCY_KEY.eq("email-invoice-7")).fetch(OUTBOX_EFFECT_TERM.TERM))
                .containsExactlyInAnyOrder("to:an@example.com", "to:bo@example.com", "to:billing@corp.example",
                        "to:audit@shop.example", "domain:example.com", "domain:corp.example", "domain:shop.example",
                        "template:invoice", "tag:category=invoice");
    }
}
