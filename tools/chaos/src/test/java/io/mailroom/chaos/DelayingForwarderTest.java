package io.mailroom.chaos;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The forwarder that stands in for {@code tc netem}: bytes in order, the delay where it is set, closes passed on. */
class DelayingForwarderTest {

    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private ServerSocket echo;
    private DelayingForwarder forwarder;

    @BeforeEach
    void start() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.execute(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    threads.execute(() -> {
                        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                            in.transferTo(out); // echoes until the client half-closes, then closes
                        } catch (IOException ignored) {
                            // client gone
                        }
                    });
                } catch (IOException closed) {
                    return;
                }
            }
        });
        forwarder = DelayingForwarder.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                new InetSocketAddress(InetAddress.getLoopbackAddress(), echo.getLocalPort()));
    }

    @AfterEach
    void stop() throws IOException {
        forwarder.close();
        echo.close();
        threads.shutdownNow();
    }

    @Test
    void carriesBytesBothWaysInOrderAndPassesTheHalfCloseOn() throws IOException {
        byte[] sent = new byte[300_000];
        for (int i = 0; i < sent.length; i++) {
            sent[i] = (byte) (i * 31);
        }
        try (Socket s = connect()) {
            threads.execute(() -> {
                try {
                    OutputStream out = s.getOutputStream();
                    for (int off = 0; off < sent.length; off += 7_000) {
                        out.write(sent, off, Math.min(7_000, sent.length - off));
                    }
                    s.shutdownOutput();
                } catch (IOException ignored) {
                    // the assertion below fails instead
                }
            });
            // the echo server only closes after the half-close reached it through the forwarder
            assertThat(s.getInputStream().readAllBytes()).isEqualTo(sent);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> forwarder.openSockets() == 0);
    }

    @Test
    void eachRoundTripTakesTheDelayLongerOnceItIsSet() throws IOException {
        try (Socket s = connect()) {
            long plain = roundTrip(s);
            forwarder.delay(Duration.ofMillis(150));
            long delayed = roundTrip(s); // the same open connection
            assertThat(delayed).as("round trip with 150 ms added (without: %d ms)", plain).isGreaterThanOrEqualTo(150);
            forwarder.delay(Duration.ZERO);
            assertThat(roundTrip(s)).isLessThan(delayed);
        }
    }

    @Test
    void aNegativeDelayIsRefused() {
        assertThatThrownBy(() -> forwarder.delay(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay must be >= 0");
    }

    @Test
    void anUnreachableServiceClosesTheClientsConnection() throws IOException {
        int port = echo.getLocalPort();
        echo.close();
        try (DelayingForwarder nowhere = DelayingForwarder.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
             Socket s = new Socket(InetAddress.getLoopbackAddress(), nowhere.port())) {
            s.setSoTimeout(10_000);
            assertThat(s.getInputStream().read()).isEqualTo(-1);
        }
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), forwarder.port());
        s.setSoTimeout(10_000);
        s.setTcpNoDelay(true);
        return s;
    }

    private static long roundTrip(Socket s) throws IOException {
        long start = System.nanoTime();
        s.getOutputStream().write('x');
        assertThat(s.getInputStream().read()).isEqualTo('x');
        return Duration.ofNanos(System.nanoTime() - start).toMillis();
    }
}
