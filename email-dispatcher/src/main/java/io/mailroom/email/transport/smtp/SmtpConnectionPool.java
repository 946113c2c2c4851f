package io.mailroom.email.transport.smtp;

import jakarta.mail.MessagingException;
import jakarta.mail.NoSuchProviderException;
import jakarta.mail.Session;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small pool of connected, authenticated SMTP sessions, so a burst of emails does not pay a TCP,
 * TLS and AUTH handshake per message. Sends run on short-lived virtual threads, so a connection
 * per thread would never be reused; the pool hands a connection to exactly one sender at a time.
 *
 * <p>A connection carries many messages, one transaction after another ({@link PipeliningSmtpTransport}
 * pipelines each one's envelope where the server allows). It goes back to the pool after a
 * successful send, or after a recipient was refused at RCPT (the transaction has been reset with
 * RSET by then) while the connection is still open; after any other failure its state is unknown
 * and it is closed. An idle connection is checked with {@code NOOP} before reuse once it
 * has been idle for a second, and dropped when idle longer than {@code maxIdle} or after
 * {@code maxMessagesPerConnection} messages.
 */
final class SmtpConnectionPool implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SmtpConnectionPool.class);
    private static final long VALIDATE_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Session session;
    private final SmtpConfig config;
    private final Semaphore permits;
    private final Deque<Connection> idle = new ArrayDeque<>();
    private final AtomicLong opened = new AtomicLong();
    private volatile boolean closed;

    SmtpConnectionPool(Session session, SmtpConfig config) {
        this.session = session;
        this.config = config;
        this.permits = new Semaphore(config.poolSize(), true);
    }

    /** One borrowed connection; give it back with {@link #release(Connection, boolean)}. */
    static final class Connection {
        final PipeliningSmtpTransport transport;
        int messagesSent;
        long lastUsedNanos;

        Connection(PipeliningSmtpTransport transport) {
            this.transport = transport;
            this.lastUsedNanos = System.nanoTime();
        }
    }

    /**
     * Connecting (or authenticating) failed; {@code lastReturnCode} is the server's last reply code,
     * or -1; {@code startTlsUnavailable} is true when STARTTLS is required but the server's EHLO
     * answer did not offer it.
     */
    static final class ConnectFailure extends Exception {
        private static final long serialVersionUID = 1L;
        final int lastReturnCode;
        final boolean startTlsUnavailable;

        ConnectFailure(MessagingException cause, int lastReturnCode, boolean startTlsUnavailable) {
            super(cause.getMessage(), cause, false, false);
            this.lastReturnCode = lastReturnCode;
            this.startTlsUnavailable = startTlsUnavailable;
        }

        MessagingException messagingException() {
            return (MessagingException) getCause();
        }
    }

    /** All connections are busy and none freed up within the connect timeout. */
    static final class PoolExhausted extends Exception {
        private static final long serialVersionUID = 1L;

        PoolExhausted() {
            super("all SMTP connections are busy", null, false, false);
        }
    }

    Connection borrow() throws ConnectFailure, PoolExhausted, InterruptedException {
        if (closed) {
            throw new IllegalStateException("SMTP transport is closed");
        }
        if (!permits.tryAcquire(config.connectTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
            throw new PoolExhausted();
        }
        try {
            Connection c;
            while ((c = pollIdle()) != null) {
                long idleNanos = System.nanoTime() - c.lastUsedNanos;
                if (idleNanos > config.maxIdle().toNanos()) {
                    closeQuietly(c);
                } else if (idleNanos > VALIDATE_AFTER_NANOS && !c.transport.isConnected()) {
                    // isConnected() sent NOOP and found the server gone (it closes the socket itself).
                    log.debug("Pooled SMTP connection went stale; opening a new one");
                } else {
                    return c;
                }
            }
            return connect();
        } catch (ConnectFailure | RuntimeException e) {
            permits.release();
            throw e;
        }
    }

    void release(Connection c, boolean reusable) {
        try {
            c.lastUsedNanos = System.nanoTime();
            if (reusable && !closed && c.messagesSent < config.maxMessagesPerConnection()) {
                synchronized (idle) {
                    // LIFO: the most recently used connection is the most likely to be alive.
                    idle.push(c);
                }
                if (closed) {
                    drain();
                }
            } else {
                closeQuietly(c);
            }
        } finally {
            permits.release();
        }
    }

    /** Connections opened since start, for metrics and tests of reuse. */
    long connectionsOpened() {
        return opened.get();
    }

    int idleConnections() {
        synchronized (idle) {
            return idle.size();
        }
    }

    @Override
    public void close() {
        closed = true;
        drain();
    }

    private Connection connect() throws ConnectFailure {
        PipeliningSmtpTransport transport;
        try {
            transport = (PipeliningSmtpTransport) session.getTransport(PipeliningSmtpTransport.PROVIDER);
        } catch (NoSuchProviderException e) {
            throw new IllegalStateException("SMTP transport class not loadable", e);
        }
        try {
            transport.connect(config.host(), config.port(), config.username(), config.password());
        } catch (MessagingException e) {
            int code = transport.getLastReturnCode();
            // Decided from the EHLO capabilities, not from the exception text.
            boolean startTlsUnavailable = config.security() == SmtpSecurity.STARTTLS && code == 250
                    && !transport.supportsExtension("STARTTLS");
            try {
                transport.close();
            } catch (MessagingException | RuntimeException ignored) {
                // already failing; the socket may be gone
            }
            throw new ConnectFailure(e, code, startTlsUnavailable);
        }
        opened.incrementAndGet();
        log.debug("Opened SMTP connection to {}:{} (pipelining: {})", config.host(), config.port(), transport.pipelines());
        return new Connection(transport);
    }

    private Connection pollIdle() {
        synchronized (idle) {
            return idle.poll();
        }
    }

    private void drain() {
        Connection c;
        while ((c = pollIdle()) != null) {
            closeQuietly(c);
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.transport.close();
        } catch (MessagingException | RuntimeException e) {
            log.debug("Closing an SMTP connection failed: {}", e.toString());
        }
    }
}
