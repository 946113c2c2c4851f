package io.mailroom.db;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;
import java.util.logging.Logger;

/**
 * A data source that says which schema Mailroom's tables are in: the service binds its pools once
 * ({@link MailroomSchema#bind}), and every part that opens a session on them (the dispatcher's
 * transactions, retention, support, webhooks) renders its statements for that schema through
 * {@link MailroomSchema#of(DataSource)}, without the name being handed through every constructor.
 * Connections are the delegate's own.
 */
final class SchemaBoundDataSource implements DataSource {

    private final DataSource delegate;
    private final MailroomSchema schema;

    SchemaBoundDataSource(DataSource delegate, MailroomSchema schema) {
        this.delegate = Objects.requireNonNull(delegate, "dataSource");
        this.schema = Objects.requireNonNull(schema, "schema");
    }

    MailroomSchema schema() {
        return schema;
    }

    DataSource delegate() {
        return delegate;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return delegate.getConnection();
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return delegate.getConnection(username, password);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(delegate) ? iface.cast(delegate) : delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(delegate) || delegate.isWrapperFor(iface);
    }
}
