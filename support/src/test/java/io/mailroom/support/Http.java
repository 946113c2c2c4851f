package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** A small HTTP client for the server tests: no redirects followed, cookies handled by hand. */
final class Http {

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
            .followRedirects(HttpClient.Redirect.NEVER).build();
    private final URI base;

    Http(URI base) {
        this.base = base;
    }

    URI base() {
        return base;
    }

    /** The server's own origin, as a browser would send it. */
    String origin() {
        return "http://" + base.getHost() + ":" + base.getPort();
    }

    HttpResponse<String> get(String path, String... headers) {
        return send(HttpRequest.newBuilder(base.resolve(path)).GET(), headers);
    }

    HttpResponse<String> postJson(String path, String json, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path))
                .POST(json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        return send(b, headers);
    }

    HttpResponse<String> postForm(String path, Map<String, String> form, String... headers) {
        String body = form.entrySet().stream()
                .map(e -> ConsolePages.url(e.getKey()) + "=" + ConsolePages.url(e.getValue()))
                .collect(Collectors.joining("&"));
        return send(HttpRequest.newBuilder(base.resolve(path)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/x-www-form-urlencoded"), headers);
    }

    private HttpResponse<String> send(HttpRequest.Builder b, String... headers) {
        for (int i = 0; i + 1 < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        try {
            return client.send(b.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static String[] bearer(String token) {
        return new String[]{"Authorization", "Bearer " + token};
    }

    static JsonNode json(HttpResponse<String> r) {
        try {
            return SupportJson.mapper().readTree(r.body());
        } catch (IOException e) {
            throw new IllegalStateException("not JSON: " + r.body(), e);
        }
    }

    /** Cookie name → value from every Set-Cookie of a response. */
    static Map<String, String> cookies(HttpResponse<?> r) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String c : setCookies(r)) {
            String pair = c.split(";", 2)[0];
            int eq = pair.indexOf('=');
            out.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
        }
        return out;
    }

    static List<String> setCookies(HttpResponse<?> r) {
        return r.headers().allValues("Set-Cookie");
    }

    /** The value of the first hidden input named {@code name} in a page. */
    static String hidden(String html, String name) {
        Matcher m = Pattern.compile("<input type=\"hidden\" name=\"" + Pattern.quote(name) + "\" value=\"([^\"]*)\"").matcher(html);
        if (!m.find()) {
            throw new IllegalStateException("no hidden " + name + " in the page");
        }
        return m.group(1);
    }
}
