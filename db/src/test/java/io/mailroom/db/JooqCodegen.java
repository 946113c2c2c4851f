package io.mailroom.db;

import io.mailroom.testing.TestDatabase;
import org.jooq.codegen.GenerationTool;
import org.jooq.meta.jaxb.Configuration;
import org.jooq.meta.jaxb.Database;
import org.jooq.meta.jaxb.ForcedType;
import org.jooq.meta.jaxb.Generate;
import org.jooq.meta.jaxb.Generator;
import org.jooq.meta.jaxb.Jdbc;
import org.jooq.meta.jaxb.Target;

import java.nio.file.Path;

/**
 * Generates the jOOQ classes from a database migrated by Flyway, with
 * {@code org.jooq.meta.postgres.PostgresDatabase}: the real PostgreSQL parses the scripts, so
 * partitioning, PL/pgSQL and partial indexes need no workaround (the H2-based DDLDatabase chokes
 * on them). The output is committed under {@code db/src/generated/java}.
 */
final class JooqCodegen {

    static final String PACKAGE = "io.mailroom.db.jooq";

    /**
     * Partitions are an implementation detail of outbox_message; Flyway's history is Flyway's; enqueue_email,
     * cancel_email, reschedule_email and their helpers are the SQL API for other languages (Java code calls
     * EmailOutbox and PendingMessages).
     */
    static final String EXCLUDES = Schema.HISTORY_TABLE + "|outbox_message_default|outbox_message_p\\d{8}|delivery_event_count_trigger"
            + "|enqueue_email.*|cancel_email|reschedule_email|pending_email_change";

    private JooqCodegen() {
    }

    static void generate(TestDatabase database, Path directory) throws Exception {
        Configuration configuration = new Configuration()
                .withJdbc(new Jdbc()
                        .withDriver("org.postgresql.Driver")
                        .withUrl(database.jdbcUrl())
                        .withUser(database.user())
                        .withPassword(database.password()))
                .withGenerator(new Generator()
                        .withName("org.jooq.codegen.JavaGenerator")
                        .withDatabase(new Database()
                                .withName("org.jooq.meta.postgres.PostgresDatabase")
                                .withInputSchema(MailroomSchema.DEFAULT_NAME)
                                .withOutputSchemaToDefault(false)
                                .withExcludes(EXCLUDES)
                                .withForcedTypes(new ForcedType()
                                        .withName("INSTANT")
                                        .withIncludeTypes("(?i:timestamp\\ with\\ time\\ zone|timestamptz)")))
                        .withGenerate(new Generate()
                                .withGeneratedAnnotation(false)
                                .withJavaTimeTypes(true)
                                .withDeprecated(false)
                                .withRecords(true)
                                .withPojos(false)
                                .withFluentSetters(true))
                        .withTarget(new Target()
                                .withPackageName(PACKAGE)
                                .withDirectory(directory.toString())
                                .withClean(true)));
        GenerationTool.generate(configuration);
    }
}
