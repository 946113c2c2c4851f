package io.mailroom.spring;

import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.InvalidEmailException;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The starter in a minimal Spring Boot context over plain JDBC (DataSourceTransactionManager and
 * JdbcTemplate, no JPA): enqueues join the {@code @Transactional} method's transaction, commit and
 * roll back with it, are refused outside one; Mailroom's schema is migrated into an empty database
 * unless switched off, after the application's own Flyway; bad settings stop the start.
 */
class MailroomAutoConfigurationTest {

    private static TestDatabase db;

    @BeforeAll
    static void emptyDatabase() throws Exception {
        db = TestDatabases.createEmpty();
        try (Connection c = db.newConnection(); Statement st = c.createStatement()) {
            // the application's table in a schema of its own: while Mailroom's scripts still migrate into public
            // (until issue 25 part 1), Flyway refuses to start its history in a public schema that is not empty
            st.execute("CREATE SCHEMA shop; CREATE TABLE shop.purchase (ref text PRIMARY KEY)");
        }
    }

    @AfterAll
    static void drop() {
        db.close();
    }

    private static ApplicationContextRunner runner(TestDatabase database) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
                        JdbcTemplateAutoConfiguration.class, MailroomAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + database.jdbcUrlWithCredentials())
                .withUserConfiguration(ShopConfig.class);
    }

    @Test
    void aCommittedTransactionalMethodCommitsItsEmailWithTheBusinessRow() {
        runner(db).run(context -> {
            context.getBean(Checkout.class).place("p-commit", "an@example.com");

            assertThat(purchases("p-commit")).isEqualTo(1);
            assertThat(outbox().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-p-commit"))).isOne();
            assertThat(outbox().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("email-p-commit"))).isOne();
            assertThat(outbox().select(OUTBOX_MESSAGE.TOPIC).from(OUTBOX_MESSAGE)
                    .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-p-commit")).fetchOne(OUTBOX_MESSAGE.TOPIC))
                    .isEqualTo("email.purchase_receipt");
        });
    }

    @Test
    void aRolledBackTransactionalMethodLeavesNeitherTheBusinessRowNorTheEmail() {
        runner(db).run(context -> {
            assertThatThrownBy(() -> context.getBean(Checkout.class).placeThenFail("p-rollback", "an@example.com"))
                    .isInstanceOf(IllegalStateException.class).hasMessage("payment declined");

            assertThat(purchases("p-rollback")).isZero();
            assertThat(outbox().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-p-rollback"))).isZero();
            assertThat(outbox().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("email-p-rollback"))).isZero();
        });
    }

    @Test
    void theEmailIsWrittenOnTheTransactionsOwnConnectionAndUnseenUntilItCommits() {
        runner(db).run(context -> {
            MailroomEmails emails = context.getBean(MailroomEmails.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(status -> {
                jdbc.update("INSERT INTO shop.purchase (ref) VALUES (?)", "p-join");
                emails.enqueue(email("p-join", "an@example.com"));
                // the same transaction sees its email; another session does not, before the commit
                assertThat(jdbc.queryForObject("SELECT count(*) FROM mailroom.outbox_message WHERE idempotency_key = ?",
                        Long.class, "email-p-join")).isOne();
                assertThat(outbox().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-p-join"))).isZero();
            });
            assertThat(outbox().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-p-join"))).isOne();
        });
    }

    @Test
    void aScheduledEmailIsCancelledOrRescheduledInTheTransaction() {
        runner(db).run(context -> {
            MailroomEmails emails = context.getBean(MailroomEmails.class);
            TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            java.time.Instant tomorrow = java.time.Instant.now().plus(java.time.Duration.ofDays(1))
                    .truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
            tx.executeWithoutResult(s -> emails.enqueue(OutgoingEmail.template("purchase_receipt").to("an@example.com", null)
                    .about("purchase", "p-later").idempotencyKey("email-p-later").sendAt(tomorrow).build()));
            assertThat(outbox().select(OUTBOX_MESSAGE.AVAILABLE_AT).from(OUTBOX_MESSAGE)
                    .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-p-later")).fetchOne(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(tomorrow);
            // rolled back with the business transaction: nothing changed
            tx.executeWithoutResult(s -> {
                assertThat(emails.cancel("email-p-later").outcome()).isEqualTo(io.mailroom.outbox.PendingChange.Outcome.CANCELLED);
                s.setRollbackOnly();
            });
            assertThat(tx.execute(s -> emails.reschedule("email-p-later", tomorrow.plusSeconds(3600))).answer())
                    .isEqualTo("rescheduled");
            assertThat(tx.execute(s -> emails.cancel("email-p-later")).answer()).isEqualTo("cancelled");
            assertThat(outbox().select(OUTBOX_MESSAGE.STATUS).from(OUTBOX_MESSAGE)
                    .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-p-later")).fetchOne(OUTBOX_MESSAGE.STATUS)).isEqualTo("cancelled");
            assertThatThrownBy(() -> emails.cancel("email-p-later")).isInstanceOf(EnqueueOutsideTransactionException.class);
        });
    }

    @Test
    void anEnqueueOutsideATransactionOrInAReadOnlyOneIsRefusedAndWritesNothing() {
        runner(db).run(context -> {
            Checkout checkout = context.getBean(Checkout.class);
            assertThatThrownBy(() -> checkout.enqueueWithoutTransaction("p-none", "an@example.com"))
                    .isInstanceOf(EnqueueOutsideTransactionException.class)
                    .hasMessageContaining("only inside the business transaction");
            assertThatThrownBy(() -> checkout.enqueueReadOnly("p-read-only", "an@example.com"))
                    .isInstanceOf(EnqueueOutsideTransactionException.class).hasMessageContaining("read-only");

            assertThat(outbox().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.in("email-p-none",
                    "email-p-read-only"))).isZero();
        });
    }

    @Test
    void anEnqueueInATransactionOfAnotherDataSourceIsRefusedAndWritesNothing() {
        runner(db).run(context -> {
            MailroomEmails emails = context.getBean(MailroomEmails.class);
            // a transaction manager of another pool: the application's DataSource has no transaction in it
            TransactionTemplate elsewhere = new TransactionTemplate(new DataSourceTransactionManager(db.dataSource()));
            assertThatThrownBy(() -> elsewhere.executeWithoutResult(status ->
                    emails.enqueue(email("p-elsewhere", "an@example.com"))))
                    .isInstanceOf(EnqueueOutsideTransactionException.class)
                    .hasMessageContaining("holds no connection of it");
            assertThat(outbox().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-p-elsewhere"))).isZero();
        });
    }

    @Test
    void listedTemplatesRefuseAnotherTemplateInTheTransaction() {
        runner(db).withPropertyValues("mailroom.templates=welcome,password_reset").run(context -> {
            assertThatThrownBy(() -> context.getBean(Checkout.class).place("p-unknown", "an@example.com"))
                    .isInstanceOf(InvalidEmailException.class).hasMessageContaining("template");
            assertThat(purchases("p-unknown")).isZero();
        });
    }

    @Test
    void migratesMailroomsSchemaIntoAnEmptyDatabaseUnlessSwitchedOff() {
        try (TestDatabase off = TestDatabases.createEmpty(); TestDatabase on = TestDatabases.createEmpty()) {
            runner(off).withPropertyValues("mailroom.migrate=false").run(context -> {
                assertThat(context).hasNotFailed().doesNotHaveBean(MailroomMigration.class).hasSingleBean(MailroomEmails.class);
                assertThat(tableExists(off, "outbox_message")).isFalse();
            });
            runner(on).run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(MailroomMigration.class).hasSingleBean(EmailOutbox.class);
                assertThat(tableExists(on, "outbox_message")).isTrue();
            });
        }
    }

    @Test
    void mailroomMigratesAfterTheApplicationsOwnFlyway() {
        try (TestDatabase both = TestDatabases.createEmpty()) {
            runner(both)
                    .withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
                    // until Mailroom's scripts leave classpath:db/migration and public (issue 25 part 1), the
                    // application's Flyway here keeps to a location and a schema of its own
                    .withPropertyValues("spring.flyway.locations=classpath:starter-test/app-migration",
                            "spring.flyway.schemas=shop", "spring.flyway.default-schema=shop")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBeanFactory().getBeanDefinition(MailroomAutoConfiguration.MIGRATION_BEAN)
                                .getDependsOn()).contains("flywayInitializer");
                        assertThat(tableExists(both, "purchase")).isTrue();
                        assertThat(tableExists(both, "outbox_message")).isTrue();
                    });
        }
    }

    @Test
    void badSettingsStopTheStartNamingTheProperty() {
        runner(db).withPropertyValues("mailroom.max-payload-bytes=10").run(context ->
                assertThat(context).getFailure().rootCause().hasMessageContaining("mailroom.max-payload-bytes"));
        runner(db).withPropertyValues("mailroom.schema=Shop Mail").run(context ->
                assertThat(context).getFailure().rootCause().hasMessageContaining("mailroom.schema"));
        runner(db).withPropertyValues("mailroom.templates=Receipt!").run(context ->
                assertThat(context).getFailure().rootCause().hasMessageContaining("mailroom.templates"));
        runner(db).withPropertyValues("mailroom.max-attachments=100").run(context ->
                assertThat(context).getFailure().rootCause().hasMessageContaining("mailroom.max-attachments must be"));
        runner(db).withPropertyValues("mailroom.max-attachment-bytes=2000", "mailroom.max-attachments-total-bytes=1000").run(context ->
                assertThat(context).getFailure().rootCause().hasMessageContaining("mailroom.max-attachments-total-bytes must be"));
    }

    @Test
    void theJarDescribesEveryPropertyForIdes() throws Exception {
        String metadata = new ClassPathResource("META-INF/spring-configuration-metadata.json")
                .getContentAsString(StandardCharsets.UTF_8);
        assertThat(metadata).contains("\"mailroom.migrate\"", "\"mailroom.schema\"", "\"mailroom.max-payload-bytes\"",
                "\"mailroom.notify-dispatchers\"", "\"mailroom.templates\"", "\"mailroom.max-attachments\"",
                "\"mailroom.max-attachment-bytes\"", "\"mailroom.max-attachments-total-bytes\"");
    }

    private static DSLContext outbox() {
        return db.dsl();
    }

    private static int purchases(String ref) {
        return db.dsl().fetchCount(DSL.table("shop.purchase"), DSL.field("ref").eq(ref));
    }

    private static boolean tableExists(TestDatabase database, String table) {
        return DSL.using(database.dataSource(), org.jooq.SQLDialect.POSTGRES)
                .fetchExists(DSL.selectOne().from("information_schema.tables").where(DSL.field("table_name").eq(table)));
    }

    static OutgoingEmail email(String ref, String to) {
        return OutgoingEmail.template("purchase_receipt").to(to, null).about("purchase", ref)
                .idempotencyKey("email-" + ref).data(Map.of("ref", ref)).build();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class ShopConfig {
        @Bean
        Checkout checkout(JdbcTemplate jdbc, MailroomEmails emails) {
            return new Checkout(jdbc, emails);
        }
    }

    /** The application's service: its own row and its email in one {@code @Transactional} method. */
    static class Checkout {
        private final JdbcTemplate jdbc;
        private final MailroomEmails emails;

        Checkout(JdbcTemplate jdbc, MailroomEmails emails) {
            this.jdbc = jdbc;
            this.emails = emails;
        }

        @Transactional
        public void place(String ref, String to) {
            jdbc.update("INSERT INTO shop.purchase (ref) VALUES (?)", ref);
            emails.enqueue(email(ref, to));
        }

        @Transactional
        public void placeThenFail(String ref, String to) {
            place(ref, to);
            throw new IllegalStateException("payment declined");
        }

        public void enqueueWithoutTransaction(String ref, String to) {
            emails.enqueue(email(ref, to));
        }

        @Transactional(readOnly = true)
        public void enqueueReadOnly(String ref, String to) {
            emails.enqueue(email(ref, to));
        }
    }
}
