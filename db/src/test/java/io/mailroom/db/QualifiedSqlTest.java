package io.mailroom.db;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every plain SQL text in the library and the service names Mailroom's tables through the schema
 * placeholder ({@code {schema}.outbox_message}), never bare: a bare name is resolved by the session's
 * search path, which is the business's (in its own transaction) or a pooler's, and would reach
 * another table of that name, or none. jOOQ statements on the generated classes are qualified by
 * construction. This reads the sources as text: it is a guard, run with the db module's tests.
 */
class QualifiedSqlTest {

    /** Every table of Mailroom's schema. */
    static final String TABLES = "outbox_message|outbox_effect|outbox_attempt|outbox_control|outbox_dispatcher"
            + "|idempotency_record|email_rendering|delivery_event|delivery_event_count|delivery_state|suppression|soft_bounce_run|audit_log"
            + "|erasure_key|outbox_rollup|outbox_rollup_mark|delivery_event_rollup";
    private static final Pattern BARE = Pattern.compile(
            "\\b(FROM|JOIN|INTO|UPDATE|TABLE|USING)\\s+(" + TABLES + ")\\b(?!_)");
    private static final List<String> MODULES = List.of("db", "outbox-core", "idempotency-store", "email-api",
            "delivery-events", "email-templates", "email-dispatcher", "support", "mailroom-service");

    @Test
    void noSqlTextNamesAMailroomTableWithoutItsSchema() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        List<String> bare = new ArrayList<>();
        int files = 0;
        for (String module : MODULES) {
            Path sources = root.resolve(module).resolve("src/main/java");
            if (!Files.isDirectory(sources)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(sources)) {
                for (Path file : walk.filter(p -> p.toString().endsWith(".java")).toList()) {
                    files++;
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        String line = lines.get(i).strip();
                        if (line.startsWith("*") || line.startsWith("//") || line.startsWith("/*")) {
                            continue; // comments speak of tables by their plain names
                        }
                        Matcher m = BARE.matcher(line);
                        if (m.find()) {
                            bare.add(root.relativize(file) + ":" + (i + 1) + ": " + line);
                        }
                    }
                }
            }
        }
        assertThat(files).as("sources read from %s", root).isGreaterThan(100);
        assertThat(bare).as("SQL naming a Mailroom table without {schema}.").isEmpty();
    }
}
