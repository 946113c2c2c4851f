package io.mailroom.email.service;

import io.javalin.config.JavalinConfig;
import io.mailroom.support.ClosingErrorHandler;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * How the service's own HTTP servers (health and metrics, delivery-event webhooks) are set up: no
 * banner, a thread pool of their own with a name, one acceptor and one selector (2 cores), and
 * errors answered without a stack trace.
 */
final class HttpListeners {

    private HttpListeners() {
    }

    static void listen(JavalinConfig c, String threadName, int maxThreads, String host, int port) {
        c.startup.showJavalinBanner = false;
        c.startup.showOldJavalinVersionWarning = false;
        QueuedThreadPool threads = new QueuedThreadPool(maxThreads, 2);
        threads.setName(threadName);
        c.jetty.threadPool = threads;
        c.jetty.modifyServer(server -> server.setErrorHandler(new ClosingErrorHandler()));
        c.jetty.addConnector((server, httpConfig) -> {
            ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(httpConfig));
            connector.setHost(host);
            connector.setPort(port);
            return connector;
        });
    }
}
