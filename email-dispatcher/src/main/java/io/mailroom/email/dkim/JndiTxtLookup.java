package io.mailroom.email.dkim;

import javax.naming.NameNotFoundException;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.directory.Attribute;
import javax.naming.directory.Attributes;
import javax.naming.directory.DirContext;
import javax.naming.directory.InitialDirContext;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;

/**
 * TXT records through the JDK's own DNS client ({@code com.sun.jndi.dns}), which asks the servers
 * of {@code /etc/resolv.conf} directly: a short timeout and one retry, so that start-up without DNS
 * costs seconds, not the JDK's default of several tries with doubling waits.
 */
public final class JndiTxtLookup implements TxtLookup {

    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);

    private final Duration timeout;
    private final String servers;

    public JndiTxtLookup(Duration timeout) {
        this(timeout, "dns:");
    }

    /** @param servers a JNDI DNS URL: {@code dns:} for the system's servers, {@code dns://127.0.0.1:5353} for one */
    JndiTxtLookup(Duration timeout, String servers) {
        this.timeout = timeout;
        this.servers = servers;
    }

    @Override
    public List<String> txt(String name) throws IOException {
        Hashtable<String, String> env = new Hashtable<>();
        env.put("java.naming.factory.initial", "com.sun.jndi.dns.DnsContextFactory");
        env.put("java.naming.provider.url", servers);
        env.put("com.sun.jndi.dns.timeout.initial", Long.toString(Math.max(1, timeout.toMillis())));
        env.put("com.sun.jndi.dns.timeout.retries", "1");
        DirContext context = null;
        try {
            context = new InitialDirContext(env);
            Attributes attributes = context.getAttributes(name, new String[]{"TXT"});
            Attribute txt = attributes.get("TXT");
            List<String> records = new ArrayList<>();
            if (txt != null) {
                NamingEnumeration<?> values = txt.getAll();
                while (values.hasMore()) {
                    records.add(joinStrings(String.valueOf(values.next())));
                }
            }
            return records;
        } catch (NameNotFoundException e) {
            return List.of();
        } catch (NamingException e) {
            throw new IOException("DNS lookup of " + name + " failed: " + e, e);
        } finally {
            if (context != null) {
                try {
                    context.close();
                } catch (NamingException ignored) {
                    // nothing held open that matters
                }
            }
        }
    }

    /**
     * The JDK gives a TXT record of several character-strings as {@code "part one" "part two"} (a
     * 2048-bit key's record is longer than one string's 255 bytes); DKIM reads them joined.
     */
    static String joinStrings(String record) {
        String r = record.strip();
        if (!r.startsWith("\"")) {
            return r;
        }
        StringBuilder out = new StringBuilder(r.length());
        boolean quoted = false;
        for (int i = 0; i < r.length(); i++) {
            char c = r.charAt(i);
            if (c == '"') {
                quoted = !quoted;
            } else if (c == '\\' && quoted && i + 1 < r.length()) {
                out.append(r.charAt(++i));
            } else if (quoted) {
                out.append(c);
            }
        }
        return out.toString();
    }
}
