package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@code mailroom dispatcher run} as an operator runs it: a process configured by its environment, stopped by SIGTERM. */
class DispatcherProcessTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    @Test
    void sigtermStopsTheDispatcherGracefullyAndItLogsNoSecrets() throws Exception {
        Path log = Files.createDirectories(Path.of("target", "process-test")).resolve("dispatcher.log");
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                MailroomCli.class.getName(), "dispatcher", "run");
        Map<String, String> env = pb.environment();
        env.put("MAILROOM_DB_URL", pg.database().jdbcUrl());
        env.put("MAILROOM_DB_USER", pg.database().user() == null ? "postgres" : pg.database().user());
        env.put("MAILROOM_DB_PASSWORD", "db-password-never-logged");
        env.put("MAILROOM_SMTP_HOST", "127.0.0.1");
        env.put("MAILROOM_SMTP_PORT", String.valueOf(greenMail.getSmtp().getPort()));
        env.put("MAILROOM_SMTP_SECURITY", "none");
        env.put("MAILROOM_SMTP_FROM", "Shop <shop@example.com>");
        env.put("MAILROOM_DISPATCHER_PORT", "0");
        env.put("MAILROOM_WORKER_ID", "process-under-test");
        env.put("MAILROOM_TEMPLATES_DIR", io.mailroom.testing.TestTemplates.directory().toString());
        pb.redirectErrorStream(true).redirectOutput(log.toFile());
        Process p = pb.start();
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("ready: health on"));
            p.destroy(); // SIGTERM
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("stopped within the shutdown deadline").isTrue();
        } finally {
            p.destroyForcibly();
        }
        String output = Files.readString(log);
        assertThat(output).contains("Dispatcher process-under-test stopped").contains("dbPassword=****")
                .doesNotContain("db-password-never-logged");
    }
}
