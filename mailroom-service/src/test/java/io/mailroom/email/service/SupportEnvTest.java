package io.mailroom.email.service;

import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.support.ApiToken;
import io.mailroom.support.Role;
import io.mailroom.support.SupportConfig;
import io.mailroom.support.cli.CliDatabase;
import io.mailroom.support.cli.ExitCodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;

import static io.mailroom.email.service.EnvConfigurationTest.assertRejected;
import static io.mailroom.email.service.EnvConfigurationTest.env;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The support server's and the support commands' settings as the service reads them from its
 * environment: every refusal names the variable, also those the support module's own checks make.
 */
class SupportEnvTest {

    private static final String ALICE = "alice-token-0123456789abcdef";
    private static final String BOB = "bob:with:colons-0123456789";

    @Test
    void supportServerSettingsAreReadFromTheEnvironment() {
        SupportConfig c = SupportEnv.config(Map.of(
                "MAILROOM_SUPPORT_TOKENS", " alice:operator:" + ALICE + " , bob:Viewer:" + BOB,
                "MAILROOM_SUPPORT_PORT", "9090", "MAILROOM_SUPPORT_SESSION_TTL", "2h",
                "MAILROOM_SUPPORT_SECURE_COOKIES", "true", "MAILROOM_SUPPORT_PUBLIC_ORIGIN", "https://support.example.com",
                "MAILROOM_SUPPORT_HTTP_THREADS", "20", "MAILROOM_SUPPORT_HOST", " localhost "));
        assertThat(c.port()).isEqualTo(9090);
        assertThat(c.host()).isEqualTo("localhost");
        assertThat(c.sessionTtl()).isEqualTo(Duration.ofHours(2));
        assertThat(c.secureCookies()).isTrue();
        assertThat(c.publicOrigin()).isEqualTo("https://support.example.com");
        assertThat(c.maxThreads()).isEqualTo(20);
        assertThat(c.demo()).isFalse();
        assertThat(c.tokens()).extracting(ApiToken::name).containsExactly("alice", "bob");
        assertThat(c.tokens()).extracting(ApiToken::role).containsExactly(Role.OPERATOR, Role.VIEWER);
        assertThat(SupportEnv.config(Map.of("MAILROOM_SUPPORT_DEMO", "yes")).port()).isEqualTo(SupportConfig.DEFAULT_PORT);
    }

    @Test
    void refusalsNameTheVariable() {
        assertRejected(() -> SupportEnv.config(Map.of()), "MAILROOM_SUPPORT_TOKENS", "MAILROOM_SUPPORT_TOKENS is empty: the"
                + " support server needs at least one name:role:token (roles viewer, support, operator); to try it without"
                + " tokens on this machine, set MAILROOM_SUPPORT_DEMO=true with MAILROOM_SUPPORT_HOST=127.0.0.1");
        assertRejected(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "true", "MAILROOM_SUPPORT_HOST", "0.0.0.0")),
                "MAILROOM_SUPPORT_DEMO", "MAILROOM_SUPPORT_DEMO=true lets anyone in as an operator, so it is only allowed"
                        + " with MAILROOM_SUPPORT_HOST on a loopback address (127.0.0.1, ::1 or localhost)");
        assertRejected(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "maybe")),
                "MAILROOM_SUPPORT_DEMO", "MAILROOM_SUPPORT_DEMO must be true or false");
        assertRejected(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "true", "MAILROOM_SUPPORT_PORT", "eighty")),
                "MAILROOM_SUPPORT_PORT", "MAILROOM_SUPPORT_PORT must be a whole number");
        assertRejected(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "true", "MAILROOM_SUPPORT_PORT", "70000")),
                "MAILROOM_SUPPORT_PORT", "MAILROOM_SUPPORT_PORT must be between 0 and 65535, got 70000");
        assertRejected(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "true", "MAILROOM_SUPPORT_SESSION_TTL", "soon")),
                "MAILROOM_SUPPORT_SESSION_TTL", "MAILROOM_SUPPORT_SESSION_TTL must be a duration such as 8h or PT30M");
        assertRejected(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "true", "MAILROOM_SUPPORT_SESSION_TTL", "30s")),
                "MAILROOM_SUPPORT_SESSION_TTL", "MAILROOM_SUPPORT_SESSION_TTL must be between 1 minute and 7 days, got PT30S");
        assertRejected(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "true", "MAILROOM_SUPPORT_HTTP_THREADS", "2")),
                "MAILROOM_SUPPORT_HTTP_THREADS", "MAILROOM_SUPPORT_HTTP_THREADS must be between 8 and 500, got 2");
        assertRejected(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "true", "MAILROOM_SUPPORT_PUBLIC_ORIGIN", "x.example/a")),
                "MAILROOM_SUPPORT_PUBLIC_ORIGIN", "MAILROOM_SUPPORT_PUBLIC_ORIGIN must look like https://support.example.com"
                        + " (scheme, host, optional port, no path)");
        assertThatThrownBy(() -> SupportEnv.config(env("MAILROOM_SUPPORT_TOKENS", "alice:operator:" + ALICE + ",")))
                .isInstanceOf(InvalidSettingException.class).hasMessage("MAILROOM_SUPPORT_TOKENS entry 2 is empty; expected"
                        + " name:role:token, separated by commas");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.0.0.0", "10.0.0.7", "::", "example.com"})
    void demoModeOffLoopbackIsRefusedNamingTheHostVariable(String host) {
        assertThatThrownBy(() -> SupportEnv.config(env("MAILROOM_SUPPORT_DEMO", "true", "MAILROOM_SUPPORT_HOST", host)))
                .as(host).hasMessageContaining("only allowed with MAILROOM_SUPPORT_HOST on a loopback address");
    }

    @Test
    void theServiceReadsTheSupportSettingsOnlyWhenSupportIsOn() {
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env("MAILROOM_DB_URL", "jdbc:postgresql://h/db",
                "MAILROOM_SMTP_FROM", "shop@example.com", "MAILROOM_SUPPORT", "on")))
                .isInstanceOf(InvalidSettingException.class).hasMessageStartingWith("MAILROOM_SUPPORT_TOKENS is empty");
    }

    @Test
    void theCommandsDatabaseDefaultsComeFromTheEnvironment() {
        CliDatabase none = SupportEnv.cliDatabase(Map.of());
        assertThat(none.url()).isNull();
        assertThat(none.pooled()).isFalse();
        assertThat(none.sessionSettings()).isEqualTo(SessionSettings.SESSION);
        assertThat(none.urlSetting()).isEqualTo("MAILROOM_DB_URL");

        CliDatabase db = SupportEnv.cliDatabase(env("MAILROOM_DB_URL", "jdbc:postgresql://h/db", "MAILROOM_DB_USER", "u",
                "MAILROOM_DB_PASSWORD", "pw", "MAILROOM_SCHEMA", "mail", "MAILROOM_DB_POOLER", "pgbouncer",
                "MAILROOM_DB_SOCKET_TIMEOUT", "20s"));
        assertThat(db.url()).isEqualTo("jdbc:postgresql://h/db");
        assertThat(db.user()).isEqualTo("u");
        assertThat(db.password()).isEqualTo("pw");
        assertThat(db.schema()).isEqualTo("mail");
        assertThat(db.pooled()).isTrue();
        assertThat(db.sessionSettings()).isEqualTo(SessionSettings.TRANSACTION);
        assertThat(db.timeouts().socket()).isEqualTo(Duration.ofSeconds(20));
        assertThat(db.toString()).doesNotContain("pw");
    }

    @Test
    void theErasureKeyIsReadFromTheEnvironmentForTheDispatcherAndTheCommands_aShortOneRefusedNamingIt() {
        assertThat(WebhookConfig.suppression(Map.of()).erasureKey().isConfigured()).isFalse();
        String key = "k".repeat(40);
        assertThat(WebhookConfig.suppression(env("MAILROOM_ERASURE_KEY", key)).erasureKey().isConfigured()).isTrue();
        assertRejected(() -> WebhookConfig.suppression(env("MAILROOM_ERASURE_KEY", "short")), "MAILROOM_ERASURE_KEY",
                "MAILROOM_ERASURE_KEY must be at least 32 characters (e.g. the output of: openssl rand -hex 32)");
        ServiceConfig service = ServiceConfig.fromEnv(env("MAILROOM_DB_URL", "jdbc:postgresql://h/db",
                "MAILROOM_SMTP_FROM", "shop@example.com", "MAILROOM_ERASURE_KEY", key));
        assertThat(service.suppression().erasureKey().isConfigured()).isTrue();
        assertThat(service.toString()).contains("erasureKey=configured").doesNotContain(key);

        Run erase = support(env("MAILROOM_DB_URL", "jdbc:postgresql://127.0.0.1:1/nothing", "MAILROOM_ERASURE_KEY", "short"),
                "erase", "--address", "ann@example.com", "--reason", "asked");
        assertThat(erase.code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(erase.err()).contains("MAILROOM_ERASURE_KEY must be at least 32 characters");
    }

    record Run(int code, String out, String err) {
    }

    private static Run support(Map<String, String> env, String... args) {
        CommandLine cmd = SupportEnv.cli(env);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cmd.setOut(new PrintWriter(out));
        cmd.setErr(new PrintWriter(err));
        int code = cmd.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void mailroomSupportRefusesBadDatabaseSettingsNamingTheVariable() {
        Run noDb = support(Map.of(), "stats");
        assertThat(noDb.code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(noDb.err()).contains("no database given: pass --db-url jdbc:postgresql://host:5432/db or set MAILROOM_DB_URL");

        Map<String, String> pooler = env("MAILROOM_DB_URL", "jdbc:postgresql://127.0.0.1:1/nothing", "MAILROOM_DB_POOLER", "pgpool");
        Run badPooler = support(pooler, "stats");
        assertThat(badPooler.code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(badPooler.err()).contains("error: MAILROOM_DB_POOLER must be 'none' or 'pgbouncer'");
        pooler.put("MAILROOM_DB_POOLER", "pgbouncer");
        pooler.put("MAILROOM_DB_SESSION_SETTINGS", "session");
        assertThat(support(pooler, "stats").err()).contains("MAILROOM_DB_SESSION_SETTINGS=session cannot work behind");
        pooler.put("MAILROOM_DB_SESSION_SETTINGS", "transaction");
        Run down = support(pooler, "stats");
        assertThat(down.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(down.err()).contains("cannot reach the database").contains("check --db-url or MAILROOM_DB_URL");

        Map<String, String> timeouts = env("MAILROOM_DB_URL", "jdbc:postgresql://127.0.0.1:1/nothing",
                "MAILROOM_DB_SOCKET_TIMEOUT", "1500ms");
        assertThat(support(timeouts, "stats").err()).contains("error: MAILROOM_DB_SOCKET_TIMEOUT must be whole seconds");
    }

    @Test
    void theOptionsHelpNamesTheVariables() {
        // a bad setting does not stop the help
        Run help = support(env("MAILROOM_DB_POOLER", "pgpool"), "emails", "--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("JDBC URL of the database (default: $MAILROOM_DB_URL)")
                .contains("$MAILROOM_DB_USER").contains("$MAILROOM_DB_PASSWORD").contains("$MAILROOM_SCHEMA");
        assertThat(MailroomCli.commandLine().getSubcommands().get("support").getUsageMessage())
                .contains("(default: $MAILROOM_DB_URL)");
    }
}
