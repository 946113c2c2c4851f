package io.mailroom.orders;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What a configured bind address means for who can reach a server. Only literals are judged (no
 * name is resolved): {@code localhost}, an IPv4 address in {@code 127.0.0.0/8} written as four
 * numbers, or the IPv6 loopback {@code ::1} (brackets optional). A host name that merely starts
 * with {@code 127.} ({@code 127.foo.example}) is a name like any other, and not loopback.
 *
 * <p>The same as the support module's {@code BindAddress} (order-service does not depend on support).
 */
final class BindAddress {

    private static final Pattern IPV4 = Pattern.compile("^\\d{1,3}(\\.\\d{1,3}){3}$");
    private static final Pattern IPV6 = Pattern.compile("^[0-9a-fA-F:.]+$");

    private BindAddress() {
    }

    /** True if {@code host} can only be reached from this machine. */
    static boolean isLoopback(String host) {
        if (host == null) {
            return false;
        }
        String h = host.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        if (h.equals("localhost")) {
            return true;
        }
        if (IPV4.matcher(h).matches()) {
            String[] octets = h.split("\\.");
            for (String octet : octets) {
                if (Integer.parseInt(octet) > 255) {
                    return false;
                }
            }
            return Integer.parseInt(octets[0]) == 127;
        }
        if (!h.contains(":") || !IPV6.matcher(h).matches()) {
            return false; // a host name: not judged
        }
        try {
            // an IPv6 literal (with ':'), which InetAddress parses without asking DNS
            return InetAddress.getByName(h).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
