package io.mailroom.bench;

import io.mailroom.testing.WrappingDataSource;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link DataSource} wrapper that counts what the code above it sends: executions per SQL text
 * and commits. Used only for an untimed census run (reflection proxies cost CPU), to show how many
 * statements and commits the runtime spends per message next to the reference loop.
 */
final class StatementCensus extends WrappingDataSource {

    private final Map<String, LongAdder> executions = new ConcurrentHashMap<>();
    private final LongAdder commits = new LongAdder();

    StatementCensus(DataSource delegate) {
        super(delegate);
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
    protected Connection wrap(Connection connection) {
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
}
