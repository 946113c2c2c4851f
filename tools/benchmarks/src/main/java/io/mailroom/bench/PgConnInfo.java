package io.mailroom.bench;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Host, port, database and credentials of a PostgreSQL JDBC URL, as libpq tools (pgbench) take them. */
record PgConnInfo(String host, int port, String database, String user, String password) {

    private static final Pattern URL = Pattern.compile("^jdbc:postgresql://([^/:?,]+)(?::(\\d+))?/([^?]*)(?:\\?(.*))?$");

    static PgConnInfo parse(String jdbcUrl) {
        Matcher m = URL.matcher(jdbcUrl);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a single-host PostgreSQL JDBC URL: " + jdbcUrl.replaceAll("password=[^&]*", "password=***"));
        }
        Map<String, String> params = new HashMap<>();
        if (m.group(4) != null) {
            for (String kv : m.group(4).split("&")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    params.put(kv.substring(0, eq), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
        }
        return new PgConnInfo(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)), m.group(3),
                params.getOrDefault("user", System.getProperty("user.name")), params.get("password"));
    }

    /** libpq environment variables for a child process. */
    Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        env.put("PGHOST", host);
        env.put("PGPORT", Integer.toString(port));
        env.put("PGDATABASE", database);
        env.put("PGUSER", user);
        if (password != null) {
            env.put("PGPASSWORD", password);
        }
        return env;
    }
}
