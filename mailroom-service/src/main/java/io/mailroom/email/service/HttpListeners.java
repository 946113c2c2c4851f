package io.mailroom.email.service;

import io.javalin.config.JavalinConfig;
import io.mailroom.support.ClosingErrorHandler;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.time.Duration;
import java.util.concurrent.Executors;

/**
 * How the service's own HTTP servers (health and metrics, delivery-event webhooks) are set up: no
 * banner, a thread pool of their own with a name, one acceptor and one selector (2 cores), and
 * errors answered without a stack trace.
 */
final class HttpListeners {

    private HttpListeners() {
    }

    static void listen(JavalinConfig c, String threadName, int maxThreads, String host, int port) {
        listen(c, threadName, maxThreads, host, port, null);
    }

    /**
     * @param readTimeout null: Jetty's defaults, on the platform pool. Else requests run on virtual
     *                    threads (a slow client parks one, not a pool thread) and a connection idle this
     *                    long is closed, whether it is sending headers or nothing at all.
     */
    static void listen(JavalinConfig c, String threadName, int maxThreads, String host, int port, Duration readTimeout) {
        c.startup.showJavalinBanner = false;
        c.startup.showOldJavalinVersionWarning = false;
        QueuedThreadPool threads = new QueuedThreadPool(maxThreads, 2);
        threads.setName(threadName);
        if (readTimeout != null) {
            threads.setVirtualThreadsExecutor(Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name(threadName + "-v", 0).factory()));
        }
        c.jetty.threadPool = threads;
        c.jetty.modifyServer(server -> server.setErrorHandler(new ClosingErrorHandler()));
        c.jetty.addConnector((server, httpConfig) -> {
            ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(httpConfig));
            connector.setHost(host);
            connector.setPort(port);
            if (readTimeout != null) {
                connector.setIdleTimeout(readTimeout.toMillis());
            }
            return connector;
        });
    }
}
