package io.mailroom.spring;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.Schema;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;

import javax.sql.DataSource;
import java.util.Objects;

/**
 * Migrates Mailroom's own schema when the application starts ({@code mailroom.migrate}, on by
 * default), before any {@link MailroomEmails} can enqueue and after the application's own Flyway or
 * Liquibase (see {@link MailroomAutoConfiguration}). It runs Mailroom's Flyway, never the
 * application's: no {@code Flyway} bean is registered, so Spring Boot's Flyway auto-configuration
 * and the application's scripts at {@code classpath:db/migration} stay the application's alone.
 *
 * <p>This class is the one place the starter calls Mailroom's migration.
 */
public class MailroomMigration implements InitializingBean {

    private static final Logger log = LoggerFactory.getLogger(MailroomMigration.class);

    private final DataSource dataSource;
    private final MailroomProperties properties;

    public MailroomMigration(DataSource dataSource, MailroomProperties properties) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.properties = Objects.requireNonNull(properties, "properties");
    }

    @Override
    public void afterPropertiesSet() {
        MailroomSchema schema = MailroomSchema.named(properties.schema());
        MigrateResult result = Schema.migrate(dataSource, schema);
        log.info("Mailroom's schema {} is at version {} ({} migration(s) applied)", schema, Schema.versionAfter(result),
                result.migrationsExecuted);
    }

    public MailroomProperties properties() {
        return properties;
    }
}
