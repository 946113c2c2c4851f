package io.mailroom.spring;

import io.mailroom.db.MailroomSchema;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.outbox.OutboxEnqueuer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.util.ClassUtils;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Mailroom in a Spring Boot application with one {@code DataSource}: an {@link EmailOutbox}, the
 * {@link MailroomEmails} that enqueues with it in the current Spring-managed transaction, and the
 * {@link MailroomMigration} of Mailroom's schema ({@code mailroom.migrate}).
 *
 * <p>Order at start: the application's own Flyway or Liquibase migrates first (the migration bean is
 * made to depend on theirs), then Mailroom's schema, then anything that enqueues: so the application's
 * migrations meet the database as they would without Mailroom, and no email is written into a schema
 * not yet migrated.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
        "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration"})
@ConditionalOnClass({EmailOutbox.class, TransactionAwareDataSourceProxy.class})
@ConditionalOnSingleCandidate(DataSource.class)
@EnableConfigurationProperties(MailroomProperties.class)
public class MailroomAutoConfiguration {

    /** The bean name of the migration, which {@link #mailroomMigrationOrder()} orders. */
    public static final String MIGRATION_BEAN = "mailroomMigration";

    /** The application's own schema migrations, by class name: the starter depends on neither tool. */
    private static final List<String> APPLICATION_MIGRATIONS = List.of(
            "org.springframework.boot.flyway.autoconfigure.FlywayMigrationInitializer",
            "liquibase.integration.spring.SpringLiquibase");

    @Bean
    @ConditionalOnMissingBean
    public EmailOutbox mailroomEmailOutbox(MailroomProperties properties) {
        Set<String> known = properties.knownTemplates();
        Supplier<Set<String>> templates = known == null ? null : () -> known;
        return new EmailOutbox(new OutboxEnqueuer(null, properties.notifyDispatchers(),
                MailroomSchema.named(properties.schema())), templates,
                properties.maxPayloadBytes(), properties.attachmentLimits());
    }

    @Bean(MIGRATION_BEAN)
    @ConditionalOnBooleanProperty(name = MailroomProperties.PREFIX + ".migrate", matchIfMissing = true)
    public MailroomMigration mailroomMigration(DataSource dataSource, MailroomProperties properties) {
        return new MailroomMigration(dataSource, properties);
    }

    @Bean
    @ConditionalOnMissingBean
    public MailroomEmails mailroomEmails(DataSource dataSource, EmailOutbox outbox,
                                         ObjectProvider<MailroomMigration> migration) {
        migration.ifAvailable(m -> { }); // migrated before the first enqueue can happen
        return new MailroomEmails(dataSource, outbox);
    }

    /** Makes Mailroom's migration wait for the application's Flyway and Liquibase beans, where there are any. */
    @Bean
    public static BeanFactoryPostProcessor mailroomMigrationOrder() {
        return beanFactory -> {
            if (!beanFactory.containsBeanDefinition(MIGRATION_BEAN)) {
                return;
            }
            ClassLoader loader = beanFactory.getBeanClassLoader();
            List<String> before = new ArrayList<>();
            for (String type : APPLICATION_MIGRATIONS) {
                if (ClassUtils.isPresent(type, loader)) {
                    before.addAll(Arrays.asList(beanFactory.getBeanNamesForType(
                            ClassUtils.resolveClassName(type, loader), true, false)));
                }
            }
            if (before.isEmpty()) {
                return;
            }
            BeanDefinition migration = beanFactory.getBeanDefinition(MIGRATION_BEAN);
            String[] existing = migration.getDependsOn();
            if (existing != null) {
                before.addAll(0, Arrays.asList(existing));
            }
            migration.setDependsOn(before.toArray(String[]::new));
        };
    }
}
