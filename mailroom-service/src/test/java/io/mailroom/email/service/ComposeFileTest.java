package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The repository's {@code docker-compose.yml} and {@code Dockerfile}, read as a newcomer's
 * {@code docker compose up} would use them (no Docker engine runs where the tests do): the README's
 * tour centres on the support console, so it is on and published; every Java service has a
 * healthcheck that the image can run ({@code mailroom health}, no curl needed); the dispatcher
 * waits for the order service to be healthy (it migrates), not only started; no host port 5432
 * (a local PostgreSQL has it); every image pinned, none {@code :latest}.
 */
class ComposeFileTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern IMAGE = Pattern.compile("^[a-z0-9./_-]+:([A-Za-z0-9._-]+)$");
    private static JsonNode services;
    private static String dockerfile;

    @BeforeAll
    static void read() throws IOException {
        JsonNode compose = new ObjectMapper(new YAMLFactory()).readTree(ROOT.resolve("docker-compose.yml").toFile());
        services = compose.get("services");
        assertThat(services).as("services").isNotNull();
        dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
    }

    /** The services built from this repository: the Java ones. */
    private static List<String> javaServices() {
        List<String> out = new ArrayList<>();
        services.properties().forEach(e -> {
            if (e.getValue().has("build")) {
                out.add(e.getKey());
            }
        });
        return out;
    }

    private static String text(JsonNode node) {
        return node == null ? null : node.isArray() ? String.join(" ", toList(node)) : node.asText();
    }

    private static List<String> toList(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static String env(String service, String name) {
        JsonNode e = services.path(service).path("environment");
        return e.has(name) ? e.get(name).asText() : null;
    }

    @Test
    void everyJavaServiceHasAHealthcheckTheImageCanRun() {
        assertThat(javaServices()).containsExactlyInAnyOrder("order-service", "dispatcher");
        for (String name : javaServices()) {
            JsonNode check = services.get(name).get("healthcheck");
            assertThat(check).as(name + " healthcheck").isNotNull();
            String test = text(check.get("test"));
            assertThat(test).as(name + " healthcheck").contains("/app/mailroom.jar", "health").doesNotContain("curl", "wget");
            assertThat(check.has("interval") && check.has("retries")).as(name + " interval and retries").isTrue();
        }
        assertThat(text(services.get("order-service").get("healthcheck").get("test")))
                .contains("http://127.0.0.1:" + env("order-service", "MAILROOM_ORDERS_PORT") + "/health/ready");
        assertThat(dockerfile).as("the runtime image has mailroom.jar, which runs the healthchecks")
                .contains("/app/mailroom.jar");
    }

    @Test
    void theDispatcherWaitsForTheOrderServiceToBeHealthy_itMigrates() {
        JsonNode dependsOn = services.get("dispatcher").get("depends_on");
        assertThat(dependsOn.path("order-service").path("condition").asText()).isEqualTo("service_healthy");
        assertThat(dependsOn.path("postgres").path("condition").asText()).isEqualTo("service_healthy");
        assertThat(env("order-service", "MAILROOM_MIGRATE")).isEqualTo("true");
        assertThat(env("dispatcher", "MAILROOM_MIGRATE")).isEqualTo("false");
        assertThat(services.get("postgres").has("healthcheck")).isTrue();
    }

    @Test
    void theSupportConsoleIsOnAndPublished() {
        assertThat(env("dispatcher", "MAILROOM_SUPPORT")).isEqualTo("on");
        assertThat(env("dispatcher", "MAILROOM_SUPPORT_HOST")).as("reachable from outside the container").isEqualTo("0.0.0.0");
        assertThat(env("dispatcher", "MAILROOM_SUPPORT_TOKENS")).as("a non-loopback console needs tokens").isNotBlank();
        String port = env("dispatcher", "MAILROOM_SUPPORT_PORT");
        assertThat(toList(services.get("dispatcher").get("ports"))).contains(port + ":" + port);
    }

    @Test
    void noHostPort5432_aLocalPostgresqlHasIt() {
        services.properties().forEach(e -> {
            JsonNode ports = e.getValue().get("ports");
            if (ports != null) {
                for (String p : toList(ports)) {
                    String[] parts = p.split(":");
                    assertThat(parts.length).as(e.getKey() + " " + p + ": host:container").isGreaterThanOrEqualTo(2);
                    assertThat(parts[parts.length - 2]).as(e.getKey() + " host port").isNotEqualTo("5432");
                }
            }
        });
    }

    @Test
    void everyImageIsPinned_noneLatest() {
        List<String> images = new ArrayList<>();
        services.properties().forEach(e -> {
            if (e.getValue().has("image")) {
                images.add(e.getKey() + "=" + e.getValue().get("image").asText());
            }
        });
        Matcher from = Pattern.compile("(?m)^FROM\\s+(\\S+)").matcher(dockerfile);
        while (from.find()) {
            images.add("Dockerfile=" + from.group(1));
        }
        assertThat(images).hasSizeGreaterThanOrEqualTo(javaServices().size() + 3);
        for (String entry : images) {
            String image = entry.substring(entry.indexOf('=') + 1);
            Matcher m = IMAGE.matcher(image);
            assertThat(m.matches()).as(entry + ": an image with a tag").isTrue();
            assertThat(m.group(1)).as(entry).isNotEqualTo("latest").matches(".*[0-9]+\\.[0-9]+.*");
        }
        // the services built here share one image, tagged with the project's version
        for (String name : javaServices()) {
            assertThat(services.get(name).path("image").asText()).as(name).isEqualTo("mailroom:" + projectVersion());
        }
    }

    private static String projectVersion() {
        try {
            Matcher m = Pattern.compile("<artifactId>mailroom-parent</artifactId>\\s*<version>([^<]+)</version>")
                    .matcher(Files.readString(ROOT.resolve("pom.xml")));
            assertThat(m.find()).as("the parent's version in pom.xml").isTrue();
            return m.group(1).replace("-SNAPSHOT", "");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void theDispatcherPublishesWhatTheReadmeTourUses() {
        List<String> ports = toList(services.get("dispatcher").get("ports"));
        assertThat(ports).contains("8082:8082", "8084:8084");
        assertThat(Map.of("order-service", toList(services.get("order-service").get("ports")))).containsEntry("order-service",
                List.of("8081:8081"));
    }
}
