package io.mailroom.db;

import org.flywaydb.core.api.MigrationVersion;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * Mailroom's migrations as one SQL text, for a business that applies every migration with its own
 * tool (psql, Liquibase, a DBA's review): {@code mailroom schema sql --from 13 --to 14}.
 *
 * <p>The text creates the schema if needed, runs each script with the schema as the search path
 * (as Flyway does), and records each script in Mailroom's history table exactly as Flyway would
 * (same version, description, script name and checksum), so that a service started with
 * {@code MAILROOM_MIGRATE=false} finds the version it needs, and a later Flyway migration carries
 * on from it. It is meant to run in one transaction ({@code psql -1 -f}).
 */
public final class SchemaSql {

    /** Every script of {@link Schema#MIGRATIONS}, in version order; SchemaSqlTest checks it against Flyway's own list. */
    static final List<String> SCRIPTS = List.of("V2__outbox.sql", "V3__idempotency_and_audit.sql",
            "V4__idempotency_repeats.sql", "V6__closed_status.sql", "V7__email_rendering.sql",
            "V9__delivery_events_and_suppression.sql", "V10__claim_incarnation.sql", "V11__dispatcher_registry.sql",
            "V12__delivery_event_counts.sql", "V13__waiting_for.sql", "V14__own_schema.sql",
            "V15__enqueue_email_function.sql", "V15_1__enqueue_email_text_rules.sql", "V16__delivery_state.sql",
            "V17__dispatcher_details.sql", "V18__effect_search.sql", "V19__topic_rollups.sql",
            "V20__erasure.sql", "V21__bulk_action.sql", "V22__send_later.sql", "V23__email_attachments.sql",
            "V24__recipients_and_tags.sql", "V25__email_capture.sql",
            "V26__enqueue_email_recipients_tags_attachments.sql", "V27__email_rendering_lz4.sql",
            "V28__claim_index_by_topic.sql", "V29__effect_outcome_in_place.sql");

    private static final Pattern NAME = Pattern.compile("V(\\d+(?:[._]\\d+)*)__(.+)\\.sql");
    private static final String RESOURCE_DIR = Schema.MIGRATIONS.substring("classpath:".length());

    private SchemaSql() {
    }

    /** One script: its version, Flyway's description, name, text and Flyway's checksum of it. */
    public record Script(MigrationVersion version, String description, String name, String text, int checksum) {
    }

    /** The newest version this build's scripts reach. */
    public static MigrationVersion latest() {
        return version(SCRIPTS.getLast());
    }

    /** The scripts whose version lies in [from, to], either bound null for open. */
    public static List<Script> scripts(MigrationVersion from, MigrationVersion to) {
        List<Script> scripts = new ArrayList<>();
        for (String name : SCRIPTS) {
            MigrationVersion v = version(name);
            if ((from == null || v.compareTo(from) >= 0) && (to == null || v.compareTo(to) <= 0)) {
                scripts.add(read(name));
            }
        }
        return scripts;
    }

    /** The SQL that brings {@code schema} from before {@code from} to {@code to} (null: open), history included. */
    public static String render(MailroomSchema schema, MigrationVersion from, MigrationVersion to) {
        List<Script> scripts = scripts(from, to);
        if (scripts.isEmpty()) {
            throw new IllegalArgumentException("no Mailroom migration between " + (from == null ? "the first" : from)
                    + " and " + (to == null ? "the latest (" + latest() + ")" : to) + "; versions: "
                    + SCRIPTS.stream().map(s -> version(s).toString()).toList());
        }
        String s = schema.name();
        String history = s + "." + Schema.HISTORY_TABLE;
        StringBuilder sql = new StringBuilder();
        sql.append("-- Mailroom schema ").append(s).append(": migrations ").append(scripts.getFirst().version())
                .append(" to ").append(scripts.getLast().version()).append(". Run in one transaction: psql -1 -f FILE\n");
        sql.append("CREATE SCHEMA IF NOT EXISTS ").append(s).append(";\n");
        sql.append("SET search_path = ").append(s).append(";\n");
        sql.append("""
                CREATE TABLE IF NOT EXISTS %1$s (
                    installed_rank integer NOT NULL PRIMARY KEY,
                    version varchar(50),
                    description varchar(200) NOT NULL,
                    type varchar(20) NOT NULL,
                    script varchar(1000) NOT NULL,
                    checksum integer,
                    installed_by varchar(100) NOT NULL,
                    installed_on timestamp NOT NULL DEFAULT now(),
                    execution_time integer NOT NULL,
                    success boolean NOT NULL
                );
                CREATE INDEX IF NOT EXISTS %2$s_s_idx ON %1$s (success);
                """.formatted(history, Schema.HISTORY_TABLE));
        for (Script script : scripts) {
            sql.append("\n-- ").append(script.name()).append('\n');
            sql.append(script.text().replace("${flyway:defaultSchema}", s));
            if (!script.text().endsWith("\n")) {
                sql.append('\n');
            }
            sql.append("INSERT INTO ").append(history).append(" (installed_rank, version, description, type, script,"
                            + " checksum, installed_by, execution_time, success) SELECT coalesce(max(installed_rank), 0) + 1, '")
                    .append(script.version()).append("', '").append(script.description().replace("'", "''"))
                    .append("', 'SQL', '").append(script.name()).append("', ").append(script.checksum())
                    .append(", current_user, 0, true FROM ").append(history).append(";\n");
        }
        return sql.toString();
    }

    static MigrationVersion version(String scriptName) {
        return MigrationVersion.fromVersion(matcher(scriptName).group(1).replace('_', '.'));
    }

    private static Matcher matcher(String scriptName) {
        Matcher m = NAME.matcher(scriptName);
        if (!m.matches()) {
            throw new IllegalStateException("not a versioned migration: " + scriptName);
        }
        return m;
    }

    private static Script read(String name) {
        String resource = RESOURCE_DIR + "/" + name;
        try (InputStream in = SchemaSql.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("migration " + resource + " is not on the class path");
            }
            byte[] bytes = in.readAllBytes();
            String text = new String(bytes, StandardCharsets.UTF_8);
            return new Script(version(name), matcher(name).group(2).replace('_', ' '), name, text, checksum(bytes));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Flyway's checksum: a CRC32 over the script's lines, each without its line ending (and no BOM). */
    static int checksum(byte[] bytes) {
        CRC32 crc = new CRC32();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(
                new java.io.ByteArrayInputStream(bytes), StandardCharsets.UTF_8))) {
            String line;
            boolean first = true;
            while ((line = reader.readLine()) != null) {
                if (first && !line.isEmpty() && line.charAt(0) == '\uFEFF') {
                    line = line.substring(1);
                }
                first = false;
                crc.update(line.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return (int) crc.getValue();
    }
}
