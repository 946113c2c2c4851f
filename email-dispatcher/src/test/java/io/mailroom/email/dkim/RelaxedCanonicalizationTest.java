package io.mailroom.email.dkim;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** RFC 6376 §3.4.6's example, and the edges of the relaxed body rules. */
class RelaxedCanonicalizationTest {

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void theRfcExample() {
        byte[] message = bytes("A: X\r\nB : Y\t\r\n\tZ  \r\n\r\n C \r\nD \t E\r\n\r\n\r\n");
        int body = RelaxedCanonicalization.bodyStart(message);
        List<RelaxedCanonicalization.Field> fields = RelaxedCanonicalization.fields(message, body);

        assertThat(fields).extracting(RelaxedCanonicalization.Field::name).containsExactly("A", "B");
        assertThat(fields.stream().map(f -> RelaxedCanonicalization.header(f.raw())).toList()).containsExactly("a:X\r\n", "b:Y Z\r\n");
        assertThat(new String(RelaxedCanonicalization.body(message, body), StandardCharsets.ISO_8859_1)).isEqualTo(" C\r\nD E\r\n");
    }

    static String body(String message) {
        byte[] m = bytes(message);
        return new String(RelaxedCanonicalization.body(m, RelaxedCanonicalization.bodyStart(m)), StandardCharsets.ISO_8859_1);
    }

    @Test
    void bodyEdges() {
        assertThat(body("H: v\r\n\r\n")).isEmpty();
        assertThat(body("H: v\r\n\r\n \t\r\n\r\n")).isEmpty();
        // a last line without CRLF gets one; empty lines inside the body stay
        assertThat(body("H: v\r\n\r\na\r\n\r\nb")).isEqualTo("a\r\n\r\nb\r\n");
        assertThat(RelaxedCanonicalization.bodyStart(bytes("H: v\r\n"))).isEqualTo(-1);
    }

    @Test
    void theRealLookupReportsAServerThatDoesNotAnswerAsUnreachable() throws IOException {
        // a bound UDP port on loopback that never answers: the lookup gives up after its timeout
        try (DatagramSocket silent = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            JndiTxtLookup lookup = new JndiTxtLookup(Duration.ofMillis(200), "dns://127.0.0.1:" + silent.getLocalPort());
            long started = System.nanoTime();
            assertThatThrownBy(() -> lookup.txt("s1._domainkey.shop.example")).isInstanceOf(IOException.class)
                    .hasMessageContaining("s1._domainkey.shop.example");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
        }
    }
}
