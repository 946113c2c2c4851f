package io.mailroom.orders;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's error page with {@code Connection: close}. When Jetty refuses a request itself (a request
 * line it cannot parse, e.g. {@code /orders/%00} or {@code /../../etc/passwd}) it answers 400 and
 * closes the connection, but it answers as to an HTTP/1.0 request and so does not say it closes:
 * the status line says HTTP/1.1, which means keep-alive, and a pooling client (the JDK's
 * {@code HttpClient}) sends its next request on the dead connection ("header parser received no
 * bytes"). Saying it makes the close a documented part of the response, and Jetty then closes after
 * every error page it writes, which it may always do.
 *
 * <p>The same as the support module's {@code ClosingErrorHandler} (order-service does not depend
 * on support).
 */
final class ClosingErrorHandler extends ErrorHandler {

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        if (!response.isCommitted()) {
            response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE);
        }
        return super.handle(request, response, callback);
    }
}
