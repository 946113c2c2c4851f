package io.mailroom.bench;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The small pure parts the figures depend on. */
class PiecesTest {

    @Test
    void percentilesUseNearestRank() {
        long[] ms = new long[100];
        for (int i = 0; i < 100; i++) {
            ms[i] = (100 - i) * 1_000_000L; // 100 ms .. 1 ms, unsorted
        }
        Percentiles p = Percentiles.ofNanos(ms);
        assertThat(p.count()).isEqualTo(100);
        assertThat(p.p50Ms()).isEqualTo(50.0);
        assertThat(p.p95Ms()).isEqualTo(95.0);
        assertThat(p.p99Ms()).isEqualTo(99.0);
        assertThat(p.maxMs()).isEqualTo(100.0);
        assertThat(Percentiles.ofNanos(new long[0]).p50Ms()).isNaN();
    }

    @Test
    void referenceStatementsAreRecognisedByKindAndComparedIgnoringLayout() {
        for (String kind : new String[]{"claim", "claim_from_mark", "finish", "effects", "attempts"}) {
            String sql = ReferenceSql.of(kind);
            assertThat(ReferenceSql.kindOf(sql)).isEqualTo(kind);
            assertThat(ReferenceSql.sameAs(sql, "  " + sql.replace(" ", "\n  ").toUpperCase())).isTrue();
        }
        assertThat(ReferenceSql.sameAs(ReferenceSql.CLAIM, ReferenceSql.CLAIM.replace("skip locked", "nowait"))).isFalse();
        assertThat(ReferenceSql.kindOf("select 1")).isNull();
        assertThat(ReferenceSql.CLAIM).contains("for no key update skip locked").doesNotContain("\n");
        assertThat(ReferenceSql.sameAs(ReferenceSql.CLAIM, ReferenceSql.claim(37))).as("the limit is the runtime's to size").isTrue();
    }

    @Test
    void placeholdersBecomeNumberedParameters() {
        assertThat(ClaimDiagnostics.dollars("a = ? and b in (?, ?)")).isEqualTo("a = $1 and b in ($2, $3)");
        assertThat(ClaimDiagnostics.dollars(ReferenceSql.claim(10))).contains("$4").doesNotContain("?").doesNotContain("$5")
                .contains("fetch next 10 rows only");
    }

    @Test
    void jdbcUrlsBecomeLibpqSettings() {
        PgConnInfo c = PgConnInfo.parse("jdbc:postgresql://db.example:6432/mt_1?user=bench&password=s%26cret&ssl=false");
        assertThat(c.environment()).containsAllEntriesOf(Map.of("PGHOST", "db.example", "PGPORT", "6432",
                "PGDATABASE", "mt_1", "PGUSER", "bench", "PGPASSWORD", "s&cret"));
        assertThat(PgConnInfo.parse("jdbc:postgresql://127.0.0.1/x?user=postgres").port()).isEqualTo(5432);
        assertThatThrownBy(() -> PgConnInfo.parse("jdbc:postgresql://a,b/x?password=secret"))
                .hasMessageNotContaining("secret");
    }

    @Test
    void tableCellsAreFormattedByMagnitude() {
        assertThat(Report.format(12345.6)).isEqualTo("12,346");
        assertThat(Report.format(123.4)).isEqualTo("123");
        assertThat(Report.format(12.34)).isEqualTo("12.3");
        assertThat(Report.format(0.456)).isEqualTo("0.46");
        assertThat(Report.format(Double.NaN)).isEqualTo("n/a");
        assertThat(Report.format(true)).isEqualTo("on");
        assertThat(Report.format(null)).isEmpty();
    }

    @Test
    void providerCheckNamesMissingRepeatedExtraAndRefusedEmails() {
        var once = new Acceptances.Entry(1_000, 1);
        Map<String, Acceptances.Entry> accepted = Map.of("k1", once, "k2", once);
        assertThat(EmailChecks.providerProblem(java.util.List.of(1L, 2L), id -> "k" + id, accepted,
                new Acceptances.Count(2, 2, 0))).isNull();

        Map<String, Acceptances.Entry> twice = Map.of("k1", once, "k2", new Acceptances.Entry(1_000, 2), "other", once);
        assertThat(EmailChecks.providerProblem(java.util.List.of(1L, 2L, 3L), id -> "k" + id, twice,
                new Acceptances.Count(3, 4, 1)))
                .contains("1 orders without an accepted email (order 3)")
                .contains("1 emails accepted more than once (order 2 x2)")
                .contains("1 accepted emails belong to no order of the run (other)")
                .contains("refused 1 requests")
                .doesNotContain("counted 4 acceptances");
        assertThat(EmailChecks.providerProblem(java.util.List.of(1L), id -> "k" + id, accepted,
                new Acceptances.Count(2, 3, 0))).contains("counted 3 acceptances but listed fewer");
    }

    @Test
    void providerCountsAreParsedStrictly() {
        assertThat(Acceptances.Count.parse("COUNT 3 4 1")).isEqualTo(new Acceptances.Count(3, 4, 1));
        assertThatThrownBy(() -> Acceptances.Count.parse("READY 1234")).hasMessageContaining("READY 1234");
    }

    @Test
    void ownCpuTimeIsReadableAndGrows() {
        long before = ProcCpu.selfNanos();
        long x = 0;
        for (long i = 0; i < 200_000_000L; i++) {
            x += i ^ (x >>> 3);
        }
        assertThat(x).isNotZero();
        assertThat(ProcCpu.selfNanos()).isGreaterThanOrEqualTo(before).isPositive();
    }
}
