package io.mailroom.db;

import org.jooq.Configuration;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.Settings;
import org.jooq.conf.SettingsTools;
import org.jooq.impl.DSL;

import javax.sql.DataSource;
import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;

/**
 * The PostgreSQL schema that holds Mailroom's tables in a business's database ({@value #DEFAULT_NAME}
 * unless configured otherwise), and the one way Mailroom's code reaches it.
 *
 * <p>Invariant: every statement Mailroom sends names its tables with this schema, never through the
 * session's {@code search_path}, which belongs to the business (its own session, in
 * {@code EmailOutbox.enqueue}) or is lost behind a transaction-mode pooler. The jOOQ classes are
 * generated for {@value #DEFAULT_NAME}; another name is a render mapping in the {@link Settings} of
 * every {@link DSLContext} this class makes or {@linkplain #join joins}. Plain SQL texts write
 * {@value #PLACEHOLDER} before a table name and go through {@link #sql(String)}.
 */
public record MailroomSchema(String name) {

    /** The schema the jOOQ classes are generated for, and the default. */
    public static final String DEFAULT_NAME = "mailroom";
    /** What a plain SQL text writes where the schema's name goes: {@code {schema}.outbox_message}. */
    public static final String PLACEHOLDER = "{schema}";
    /** Lower-case unquoted identifiers only: the name is written into SQL and into Flyway's settings unquoted. */
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    /** Declared after {@link #NAME}, which its construction checks against. */
    public static final MailroomSchema DEFAULT = new MailroomSchema(DEFAULT_NAME);
    /**
     * Data sources bound to a schema other than the default, by identity (a data source's own
     * equals/hashCode are not ours to call: a proxy may refuse them) and weakly (a closed pool is
     * forgotten with it). A service binds a handful of pools, so a scan is all it takes.
     */
    private static final List<Binding> BOUND = new CopyOnWriteArrayList<>();

    private record Binding(WeakReference<DataSource> dataSource, MailroomSchema schema) {
    }

    public MailroomSchema {
        Objects.requireNonNull(name, "schema name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("schema name '" + name + "' must be a lower-case identifier:"
                    + " a letter or _ first, then letters, digits or _, at most 63 characters");
        }
        if (name.startsWith("pg_") || name.equals("information_schema")) {
            throw new IllegalArgumentException("schema name '" + name + "' is reserved by PostgreSQL");
        }
    }

    public static MailroomSchema named(String name) {
        return name == null || name.isBlank() ? DEFAULT : new MailroomSchema(name.strip());
    }

    public boolean isDefault() {
        return DEFAULT_NAME.equals(name);
    }

    /** Settings that render the generated classes' schema as this one (no mapping for the default). */
    public Settings settings() {
        return apply(new Settings());
    }

    private Settings apply(Settings settings) {
        if (isDefault()) {
            return settings;
        }
        return settings.withRenderMapping(new RenderMapping().withSchemata(
                new MappedSchema().withInput(DEFAULT_NAME).withOutput(name)));
    }

    /** A context over {@code dataSource} that reaches this schema. */
    public DSLContext dsl(DataSource dataSource) {
        return DSL.using(dataSource, SQLDialect.POSTGRES, settings());
    }

    /** A context over one {@code connection} (a session taken by the caller) that reaches this schema. */
    public DSLContext dsl(java.sql.Connection connection) {
        return DSL.using(connection, SQLDialect.POSTGRES, settings());
    }

    /**
     * Marks {@code dataSource} as one whose sessions reach this schema and returns it: what a service
     * does once with each pool it opens, so that every part it builds on the pool (the dispatcher's
     * transactions, retention, support, webhooks) renders its statements for this schema
     * ({@link #of(DataSource)} reads the mark back) without the name being handed through every
     * constructor. The mark is held by the data source's identity and goes with it.
     */
    public DataSource bind(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        BOUND.removeIf(b -> b.dataSource().get() == null || b.dataSource().get() == dataSource);
        if (!isDefault()) {
            BOUND.add(new Binding(new WeakReference<>(dataSource), this));
        }
        return dataSource;
    }

    /** The schema {@code dataSource} was {@linkplain #bind bound} to; the default for any other. */
    public static MailroomSchema of(DataSource dataSource) {
        for (Binding b : BOUND) {
            if (b.dataSource().get() == dataSource) {
                return b.schema();
            }
        }
        return DEFAULT;
    }

    /**
     * The caller's own context (its connection, its transaction, its settings otherwise), made to
     * reach this schema: what enqueueing inside a business's transaction runs on.
     */
    public DSLContext join(DSLContext callers) {
        if (isDefault() || of(callers).equals(this)) {
            return callers;
        }
        Configuration configuration = callers.configuration();
        return DSL.using(configuration.derive(apply(SettingsTools.clone(configuration.settings()))));
    }

    /**
     * The schema a context made by {@link #dsl} or {@link #join} reaches (the default for any other
     * context).
     */
    public static MailroomSchema of(DSLContext dsl) {
        RenderMapping mapping = dsl.settings().getRenderMapping();
        if (mapping != null && mapping.getSchemata() != null) {
            for (MappedSchema s : mapping.getSchemata()) {
                if (DEFAULT_NAME.equals(s.getInput()) && s.getOutput() != null) {
                    return new MailroomSchema(s.getOutput());
                }
            }
        }
        return DEFAULT;
    }

    /** {@code template} with every {@value #PLACEHOLDER} replaced by this schema's name. */
    public String sql(String template) {
        return template.replace(PLACEHOLDER, name);
    }

    /** {@code table} qualified with this schema: {@code mailroom.outbox_message}. */
    public String table(String table) {
        return name + "." + table;
    }

    @Override
    public String toString() {
        return name;
    }
}
