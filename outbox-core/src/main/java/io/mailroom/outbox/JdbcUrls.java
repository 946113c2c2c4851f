package io.mailroom.outbox;

/**
 * JDBC URL settings a dispatcher's pool should have. TCP keepalive lets the server notice a
 * dispatcher host that vanished (power loss, network cut) and release its locks and its
 * transaction; without it a dead peer's session can linger for hours.
 */
public final class JdbcUrls {

    private JdbcUrls() {
    }

    /** {@code url} with {@code tcpKeepAlive=true} added unless it already says how to keep alive. */
    public static String withKeepAlive(String url) {
        if (url == null || !url.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL: " + url);
        }
        if (url.toLowerCase(java.util.Locale.ROOT).contains("tcpkeepalive=")) {
            return url;
        }
        return url + (url.contains("?") ? "&" : "?") + "tcpKeepAlive=true";
    }
}
