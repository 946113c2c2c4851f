package io.mailroom.email.service;

import io.mailroom.outbox.Durations;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * {@code mailroom health [URL]}: asks a Mailroom service whether it is ready and exits 0 when it
 * answers 200, 1 otherwise, with one line saying what it answered. A container healthcheck needs
 * no curl or wget in the image this way (the JRE images do not promise either): the dispatcher's
 * {@code /health/ready} by default, or any URL, such as the order service's.
 */
@Command(name = "health", mixinStandardHelpOptions = true,
        description = "Ask a service's readiness endpoint; exit 0 when it answers 200 (a container healthcheck).")
final class HealthCommand implements Callable<Integer> {

    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);
    private static final int SHOWN = 300;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "URL",
            description = "default: http://127.0.0.1:<MAILROOM_DISPATCHER_PORT, 8082>/health/ready")
    String url;

    @Option(names = "--timeout", paramLabel = "DURATION", description = "connect and answer within this (default 3s)")
    String timeout;

    @Override
    public Integer call() {
        java.io.PrintWriter out = spec.commandLine().getOut();
        Duration within = timeout == null ? DEFAULT_TIMEOUT : Durations.parse("--timeout", timeout);
        URI target = URI.create(url != null ? url : "http://127.0.0.1:" + defaultPort() + "/health/ready");
        HttpClient client = HttpClient.newBuilder().connectTimeout(within).build();
        try {
            HttpResponse<String> answer = client.send(HttpRequest.newBuilder(target).timeout(within).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            String body = answer.body().strip().replaceAll("\\s+", " ");
            boolean ready = answer.statusCode() == 200;
            out.println((ready ? "ready: " : "not ready: ") + target + " answered " + answer.statusCode()
                    + (body.isEmpty() ? "" : " " + (body.length() > SHOWN ? body.substring(0, SHOWN) + "…" : body)));
            return ready ? 0 : 1;
        } catch (java.io.IOException e) {
            out.println("not ready: " + target + " did not answer (" + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")");
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } finally {
            client.shutdownNow();
        }
    }

    private static String defaultPort() {
        String port = System.getenv("MAILROOM_DISPATCHER_PORT");
        return port == null || port.isBlank() ? String.valueOf(ServiceConfig.DEFAULT_PORT) : port.strip();
    }
}
