package io.mailroom.bench;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * A {@link DataSource} wrapper that counts what the code above it sends: executions per SQL text
 * and commits. Used only for an untimed census run (reflection proxies cost CPU), to show how many
 * statements and commits the runtime spends per message next to the reference loop.
 */
final class StatementCensus implements DataSource {

    private final DataSource delegate;
    private final Map<String, LongAdder> executions = new ConcurrentHashMap<>();
    private final LongAdder commits = new LongAdder();

    StatementCensus(DataSource delegate) {
        this.delegate = delegate;
    }

    /** Executions per SQL text (whitespace collapsed), in first-seen order of the texts. */
    Map<String, Long> executions() {
        Map<String, Long> out = new LinkedHashMap<>();
        executions.forEach((sql, n) -> out.put(sql, n.sum()));
        return out;
    }

    long totalExecutions() {
        return executions.values().stream().mapToLong(LongAdder::sum).sum();
    }

    long commits() {
        return commits.sum();
    }

    private void executed(String sql) {
        executions.computeIfAbsent(sql.replaceAll("\\s+", " ").trim(), k -> new LongAdder()).increment();
    }

    @Override
    public Connection getConnection() throws SQLException {
        return wrap(delegate.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return wrap(delegate.getConnection(username, password));
    }

    private Connection wrap(Connection connection) {
        InvocationHandler handler = (proxy, method, args) -> {
            Object result = invoke(connection, method, args);
            switch (method.getName()) {
                case "commit" -> commits.increment();
                case "prepareStatement" -> {
                    return statement((Statement) result, (String) args[0], PreparedStatement.class);
                }
                case "createStatement" -> {
                    return statement((Statement) result, null, Statement.class);
                }
                default -> {
                }
            }
            return result;
        };
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{Connection.class}, handler);
    }

    private Object statement(Statement statement, String sql, Class<? extends Statement> type) {
        InvocationHandler handler = (proxy, method, args) -> {
            String name = method.getName();
            if (name.startsWith("execute")) {
                executed(sql != null ? sql : args != null && args.length > 0 && args[0] instanceof String s ? s : "?");
            }
            return invoke(statement, method, args);
        };
        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{type}, handler);
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
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
        return iface.isInstance(this) ? iface.cast(this) : delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || delegate.isWrapperFor(iface);
    }
}
