package io.mailroom.db;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each module owns its tables (issue 25, part 5): its {@code src/main} names, through jOOQ
 * ({@code Tables.X}, {@code jooq.tables.X}) or SQL text ({@code {schema}.x}, {@code schema.table("x")}),
 * only the tables it owns; another module's tables are reached through the owner's Java API. What
 * remains is listed in {@link #ALLOWED} with the reason, and an entry that no longer matches anything
 * fails too, so the list only shrinks. This reads the sources as text, like {@link QualifiedSqlTest}.
 */
class TableOwnershipTest {

    /** Module → the tables it owns (their migrations are db's, their statements the module's). */
    static final Map<String, Set<String>> OWNERS = ownersInOrder();

    private static Map<String, Set<String>> ownersInOrder() {
        Map<String, Set<String>> owners = new LinkedHashMap<>();
        owners.put("outbox-core", Set.of("outbox_message", "outbox_effect", "outbox_effect_term", "outbox_attempt", "outbox_control",
                "outbox_dispatcher", "audit_log", "outbox_rollup", "outbox_rollup_mark"));
        owners.put("idempotency-store", Set.of("idempotency_record"));
        owners.put("email-api", Set.of("email_attachment_content", "email_attachment_ref"));
        owners.put("delivery-events", Set.of("delivery_event", "delivery_event_count", "delivery_state", "suppression",
                "soft_bounce_run", "erasure_key", "delivery_event_rollup", "delivery_recipient_state"));
        owners.put("email-templates", Set.of());
        owners.put("email-dispatcher", Set.of("email_rendering", "email_capture"));
        owners.put("support", Set.of("bulk_action"));
        owners.put("mailroom-service", Set.of());
        owners.put("mailroom-spring-boot-starter", Set.of());
        return owners;
    }

    /** A file that still names a table of another module, and why. */
    record Allowed(String file, String table, String why) {
    }

    /** Files allowed to name a table of another module, and why: none (support reads through the owners' APIs). */
    static final List<Allowed> ALLOWED = List.of();

    private static final Set<String> TABLES = OWNERS.values().stream().flatMap(Set::stream)
            .collect(Collectors.toCollection(TreeSet::new));
    private static final Pattern JOOQ_CONSTANT = Pattern.compile("\\bTables\\.([A-Z][A-Z0-9_]*)\\b");
    private static final Pattern JOOQ_CLASS = Pattern.compile("\\bjooq\\.tables\\.(?:records\\.)?([A-Z][A-Za-z0-9]*)\\b");
    private static final Pattern SQL_TEXT = Pattern.compile("\\{schema}\\.([a-z_][a-z0-9_]*)");
    private static final Pattern SCHEMA_TABLE = Pattern.compile("\\.table\\(\"([a-z_][a-z0-9_]*)\"\\)");

    @Test
    void noModuleNamesATableItDoesNotOwn() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        Set<String> found = new TreeSet<>();
        List<String> violations = new ArrayList<>();
        int files = 0;
        for (var owner : OWNERS.entrySet()) {
            Path sources = root.resolve(owner.getKey()).resolve("src/main/java");
            if (!Files.isDirectory(sources)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(sources)) {
                for (Path file : walk.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    files++;
                    String relative = root.relativize(file).toString().replace('\\', '/');
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        String line = lines.get(i).strip();
                        if (line.startsWith("*") || line.startsWith("//") || line.startsWith("/*")) {
                            continue; // comments speak of tables by their plain names
                        }
                        for (String table : tablesNamed(line)) {
                            if (owner.getValue().contains(table)) {
                                continue;
                            }
                            found.add(relative + " " + table);
                            if (!allowed(relative, table)) {
                                violations.add(relative + ":" + (i + 1) + ": " + table + " (owned by " + ownerOf(table)
                                        + "): " + line);
                            }
                        }
                    }
                }
            }
        }
        System.out.println("TableOwnershipTest: " + ALLOWED.size() + " allowlisted (file, table) pairs remain");
        assertThat(files).as("sources read from %s", root).isGreaterThan(100);
        assertThat(violations).as("a module naming a table it does not own (go through the owner's API)").isEmpty();
        assertThat(ALLOWED.stream().filter(a -> !found.contains(a.file() + " " + a.table())).toList())
                .as("allowlist entries that no longer match anything: remove them").isEmpty();
    }

    /** The Mailroom tables a line of Java names, by any of the four forms. */
    static Set<String> tablesNamed(String line) {
        Set<String> out = new TreeSet<>();
        Matcher m = JOOQ_CONSTANT.matcher(line);
        while (m.find()) {
            table(m.group(1).toLowerCase(Locale.ROOT), out);
        }
        m = JOOQ_CLASS.matcher(line);
        while (m.find()) {
            String simple = m.group(1).endsWith("Record") ? m.group(1).substring(0, m.group(1).length() - "Record".length())
                    : m.group(1);
            table(simple.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT), out);
        }
        for (Pattern p : List.of(SQL_TEXT, SCHEMA_TABLE)) {
            m = p.matcher(line);
            while (m.find()) {
                table(m.group(1), out);
            }
        }
        return out;
    }

    /** A name of the schema's tables, a partition of the hot table counting as the hot table. */
    private static void table(String name, Set<String> out) {
        if (TABLES.contains(name)) {
            out.add(name);
        } else if (name.startsWith("outbox_message_")) {
            out.add("outbox_message");
        }
    }

    private static boolean allowed(String file, String table) {
        return ALLOWED.stream().anyMatch(a -> a.file().equals(file) && a.table().equals(table));
    }

    private static String ownerOf(String table) {
        return OWNERS.entrySet().stream().filter(e -> e.getValue().contains(table)).map(Map.Entry::getKey)
                .findFirst().orElse("nobody");
    }

    @Test
    void everyFormOfNamingATableIsSeen() {
        assertThat(tablesNamed("import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;")).containsExactly("outbox_effect");
        assertThat(tablesNamed("import io.mailroom.db.jooq.tables.EmailRendering;")).containsExactly("email_rendering");
        assertThat(tablesNamed("io.mailroom.db.jooq.tables.records.DeliveryEventCountRecord r"))
                .containsExactly("delivery_event_count");
        assertThat(tablesNamed("SELECT 1 FROM {schema}.idempotency_record r JOIN {schema}.outbox_message_default d"))
                .containsExactly("idempotency_record", "outbox_message");
        assertThat(tablesNamed("schema.table(\"audit_log\")")).containsExactly("audit_log");
        assertThat(tablesNamed("no table here: outbox_effect without a form")).isEmpty();
    }
}
