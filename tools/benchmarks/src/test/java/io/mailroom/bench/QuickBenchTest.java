package io.mailroom.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CI variant of the benchmarks: {@code --quick} runs every scenario on tiny sizes against the
 * test server. It asserts what the tool must always get right, never how fast anything was: every
 * scenario produced its rows, every drain ended with each message done exactly once (handler,
 * messages, effects and attempt history agree), the reference still runs the runtime's own SQL,
 * every email of the end-to-end runs reached the loopback provider exactly once, and the JSON holds
 * what the table printed.
 */
@Tag("short-run") // CI runs it as a step of its own: ./mvnw -B verify -P short-runs
class QuickBenchTest {

    @Test
    void quickRunCoversEveryScenarioAndLosesNothing(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("bench-results.json");
        BenchCommand command = new BenchCommand();
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        int exit;
        try {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            exit = new CommandLine(command).execute("--quick", "--output", json.toString());
        } finally {
            System.setOut(stdout);
        }
        String table = printed.toString(StandardCharsets.UTF_8);
        stdout.println(table);
        Report report = command.report;

        Map<String, String> problems = report.sections.stream().flatMap(s -> s.rows.stream()
                        .filter(r -> Report.FAILED.equals(r.get("status")))
                        .map(r -> Map.entry(s.id + " " + r, String.valueOf(r.get("note")))))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a));
        assertThat(problems).as("rows whose checks failed").isEmpty();
        assertThat(exit).isZero();

        assertThat(report.sections).extracting(s -> s.id)
                .contains("throughput", "census", "diagnostics", "e2e", "latency", "enqueue", "scaling",
                        "dispatch", "dispatch_latency", "dispatch_census", "memory");

        // scenarios 1 and 2: every batch size, both attempt settings, runtime beside its reference
        var throughput = report.find("throughput").rows;
        for (int batch : List.of(10, 100)) {
            for (boolean attempts : List.of(true, false)) {
                var cell = throughput.stream().filter(r -> r.get("batch").equals(batch) && r.get("attempts").equals(attempts)).toList();
                assertThat(cell).extracting(r -> r.get("driver")).contains("runtime", "jdbc-ref");
                for (var row : cell) {
                    assertThat(row.get("status")).isEqualTo(Report.OK);
                    assertThat((Long) row.get("messages")).isEqualTo(batch * 100L > 1000 ? 1000L : batch * 100L);
                    assertThat((Double) row.get("msg_per_s")).isPositive();
                    // the compiler threads' CPU is part of the JVM's (two ticks of slack: read one after the other)
                    assertThat((Double) row.get("jit_cpu_ms_per_1k")).isNotNull().isNotNegative()
                            .isLessThanOrEqualTo((Double) row.get("client_cpu_ms_per_1k") + 20.0 * 1000 / (Long) row.get("messages"));
                }
                assertThat(cell.stream().filter(r -> r.get("driver").equals("runtime")).findFirst().orElseThrow()
                        .get("ratio_jdbc")).isNotNull();
            }
        }
        assertThat(report.find("census").rows).allSatisfy(r -> assertThat(r.get("same_sql"))
                .as("the runtime's SQL changed: copy the new texts from the census into ReferenceSql").isEqualTo("yes"));
        assertThat(report.find("diagnostics").rows).isNotEmpty()
                .allSatisfy(r -> assertThat((Double) r.get("execution_ms")).isPositive());

        // scenario 5: both wake-up modes measured to the handler, and through the services to the provider
        var latency = report.find("latency").rows;
        assertThat(latency.stream().filter(r -> r.get("measure").equals("commit -> handler start")).toList()).hasSize(2)
                .allSatisfy(r -> {
                    assertThat(r.get("status")).isEqualTo(Report.OK);
                    assertThat(r.get("messages")).isEqualTo(200);
                });
        assertThat(latency.stream().filter(r -> r.get("measure").equals(CommitToProviderLatency.MEASURE)).toList()).hasSize(1)
                .allSatisfy(r -> {
                    assertThat(r.get("status")).as("provider row: %s", r.get("note")).isEqualTo(Report.OK);
                    assertThat(r.get("messages")).isEqualTo(200);
                    assertThat((Double) r.get("p99_ms")).isNotNaN();
                });

        // scenario 6: four variants with their ratios
        assertThat(report.find("enqueue").rows).hasSize(4)
                .allSatisfy(r -> assertThat(r.get("overhead_throughput")).isNotNull());

        // scenario 7: one and two processes drained the queue between them
        assertThat(report.find("scaling").rows).extracting(r -> r.get("processes")).containsExactly(1, 2);
        assertThat(report.find("scaling").rows).allSatisfy(r -> assertThat(r.get("messages")).isEqualTo(1000L));

        // scenarios 3 and 4: orders posted to the order service, every email accepted once by the HTTP stub / SMTP sink
        assertThat(report.find("e2e").rows).extracting(r -> r.get("transport")).containsExactly("http", "smtp");
        assertThat(report.find("e2e").rows).allSatisfy(r -> {
            assertThat(r.get("status")).as("%s: %s", r.get("scenario"), r.get("note")).isEqualTo(Report.OK);
            assertThat(r.get("orders")).isEqualTo(40L);
            assertThat((Double) r.get("emails_per_s")).isPositive();
            assertThat(r.get("client_cpu_ms_per_1k")).isNotNull();
        });

        // issue 17, dispatcher only: the no-op queue reference and the HTTP drain, each email accepted once, CPU split
        var dispatch = report.find("dispatch").rows;
        assertThat(dispatch).hasSize(2);
        assertThat((Double) dispatch.get(0).get("emails_per_s")).isPositive();
        assertThat(dispatch.get(1)).satisfies(r -> {
            assertThat(r.get("provider")).isEqualTo(DispatchOnly.Provider.HTTP.label);
            assertThat(r.get("emails")).isEqualTo(100L);
            assertThat((Double) r.get("ratio_queue")).isPositive();
            assertThat(r.get("dispatcher_cpu_ms")).isNotNull();
            assertThat(r.get("provider_cpu_ms")).isNotNull();
        });
        assertThat(report.find("dispatch_latency").rows).hasSize(2).allSatisfy(r -> {
            assertThat(r.get("status")).as("%s", r.get("note")).isEqualTo(Report.OK);
            assertThat((Double) r.get("p99_ms")).isNotNaN();
        });
        assertThat(report.find("dispatch_latency").rows.getFirst().get("rate")).isEqualTo(200);
        assertThat(report.find("dispatch_census").rows).singleElement().satisfies(r -> {
            assertThat(r.get("emails")).isEqualTo(200L);
            // the batch path (issue 17): the reservation, the renderings and the completion's record
            // update are statements per batch, not per email (3.80 per email before, in this quick run)
            assertThat((Double) r.get("statements_per_email")).isPositive().isLessThan(2.0);
            assertThat((Double) r.get("commits_per_email")).isPositive();
        });

        // issue 28, memory: idle, paused backlog, drain and review rows, each with its RSS and heap; the review is real
        assertThat(report.find("memory").rows).hasSize(4).allSatisfy(r -> {
            assertThat(r.get("status")).as("%s: %s", r.get("phase"), r.get("note")).isEqualTo(Report.OK);
            assertThat((Double) r.get("rss_mib")).isPositive();
            assertThat((Double) r.get("heap_used_mib")).isPositive();
        });
        assertThat(report.find("memory").rows.get(3).get("in_review")).isEqualTo(20L);

        // the printed table and the JSON file carry the same results
        assertThat(table).contains("== 1+2. Queue throughput", "== 3+4. End to end", "== 7. Scaling", "== 17. Dispatcher only")
                .doesNotContain(Report.NOT_AVAILABLE);
        JsonNode doc = new ObjectMapper().readTree(json.toFile());
        assertThat(doc.path("machine").path("postgresql").asText()).startsWith("PostgreSQL");
        assertThat(doc.path("sections")).hasSize(report.sections.size());
        int rows = report.sections.stream().mapToInt(s -> s.rows.size()).sum();
        int jsonRows = 0;
        for (JsonNode s : doc.path("sections")) {
            jsonRows += s.path("rows").size();
        }
        assertThat(jsonRows).isEqualTo(rows);
    }
}
