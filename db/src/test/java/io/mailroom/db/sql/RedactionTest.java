package io.mailroom.db.sql;

import io.mailroom.testing.PostgresExtension;
import org.jooq.JSONB;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The address and names of an erasure are taken out of text the same way in SQL and in Java, and nothing else is. */
class RedactionTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final Redaction r = new Redaction("a.b+c@example.com", List.of("Ann \"Nan\" Lee", "Ann Lee", "A"),
            Redaction.marker("0a1b2c3d4e"));

    private String sql(String text) {
        return pg.dsl().select(r.text(DSL.val(text, SQLDataType.VARCHAR))).fetchOne(0, String.class);
    }

    @Test
    void theAddressInAnyCaseAndTheNamesGo_lookalikesStay() {
        String text = "550 <A.B+C@Example.com>: no; also a.b+c@example.com, not aXb+c@example.com nor a.bbc@example.com;"
                + " Dear ann lee, Ann \"Nan\" Lee";
        String expected = "550 <erased-0a1b2c3d4e@erased.invalid>: no; also erased-0a1b2c3d4e@erased.invalid, not"
                + " aXb+c@example.com nor a.bbc@example.com; Dear (erased), (erased)";
        assertThat(sql(text)).isEqualTo(expected);
        assertThat(r.apply(text)).isEqualTo(expected);
        assertThat(r.names()).as("one letter is not a name; longer names first").containsExactly("Ann \"Nan\" Lee", "Ann Lee");
        assertThat(sql(null)).isNull();
        assertThat(pg.dsl().select(r.text(DSL.val("x a.b+c@example.com", SQLDataType.VARCHAR), 12)).fetchOne(0, String.class))
                .isEqualTo("x erased-0a1");
    }

    @Test
    void inJsonANameIsMatchedAsJsonWritesIt_andTheResultIsStillJson() {
        String json = "{\"to\": {\"name\": \"Ann \\\"Nan\\\" Lee\", \"address\": \"A.B+C@example.com\"}, \"n\": 1}";
        String out = pg.dsl().select(r.json(DSL.val(JSONB.valueOf(json))).cast(SQLDataType.VARCHAR)).fetchOne(0, String.class);
        assertThat(out).isEqualTo("{\"n\": 1, \"to\": {\"name\": \"(erased)\", \"address\": \"erased-0a1b2c3d4e@erased.invalid\"}}");
        assertThat(pg.dsl().select(r.mentions(DSL.val("<A.B+C@EXAMPLE.COM>"))).fetchOne(0, Boolean.class)).isTrue();
        assertThat(pg.dsl().select(r.mentions(DSL.val("a.b+c@example.co"))).fetchOne(0, Boolean.class)).isFalse();
    }

    @Test
    void aMarkerIsRecognisedAndBadInputIsRefused() {
        assertThat(Redaction.isMarker("erased-0a1b2c3d4e@erased.invalid")).isTrue();
        assertThat(Redaction.isMarker("ann@example.com")).isFalse();
        assertThatThrownBy(() -> new Redaction("Ann@example.com", List.of(), Redaction.marker("0a1b2c")))
                .hasMessageContaining("normalized");
        assertThatThrownBy(() -> new Redaction("ann@example.com", List.of(), "x@example.com")).hasMessageContaining("marker");
        assertThat(r.toString()).doesNotContain("example.com");
    }
}
