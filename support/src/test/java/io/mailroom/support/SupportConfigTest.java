package io.mailroom.support;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Configuration: who may come in, and the refusals that keep a misconfigured server from starting. */
class SupportConfigTest {

    private static final String ALICE = "alice-token-0123456789abcdef";
    private static final String BOB = "bob:with:colons-0123456789";

    @Test
    void tokensAreReadFromTheEnvironmentAndOnlyTheirHashesAreKept() {
        SupportConfig c = SupportConfig.fromEnvironment(Map.of(
                SupportConfig.ENV_TOKENS, " alice:operator:" + ALICE + " , bob:Viewer:" + BOB,
                SupportConfig.ENV_PORT, "9090", SupportConfig.ENV_SESSION_TTL, "2h",
                SupportConfig.ENV_SECURE_COOKIES, "true", SupportConfig.ENV_PUBLIC_ORIGIN, "https://support.example.com"));
        assertThat(c.port()).isEqualTo(9090);
        assertThat(c.host()).isEqualTo("127.0.0.1");
        assertThat(c.sessionTtl()).isEqualTo(Duration.ofHours(2));
        assertThat(c.secureCookies()).isTrue();
        assertThat(c.tokens()).extracting(ApiToken::name).containsExactly("alice", "bob");
        assertThat(c.tokens()).extracting(ApiToken::role).containsExactly(Role.OPERATOR, Role.VIEWER);
        assertThat(c.toString()).contains("alice:operator:****").doesNotContain(ALICE).doesNotContain(BOB);

        Authenticator auth = new Authenticator(c.tokens(), false);
        assertThat(auth.byToken(ALICE)).contains(new Actor("alice", Role.OPERATOR));
        assertThat(auth.byToken(BOB)).contains(new Actor("bob", Role.VIEWER));
        assertThat(auth.byToken(ALICE + "x")).isEmpty();
        assertThat(auth.byToken("")).isEmpty();
        assertThat(auth.byToken(null)).isEmpty();
    }

    @Test
    void withoutTokensTheServerRefusesToStartUnlessDemoModeIsOnOnLoopback() {
        assertThatThrownBy(() -> SupportConfig.fromEnvironment(Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(SupportConfig.ENV_TOKENS + " is empty");
        SupportConfig demo = SupportConfig.fromEnvironment(Map.of(SupportConfig.ENV_DEMO, "true"));
        assertThat(demo.demo()).isTrue();
        assertThat(demo.tokens()).isEmpty();
        assertThatThrownBy(() -> SupportConfig.fromEnvironment(Map.of(SupportConfig.ENV_DEMO, "true", SupportConfig.ENV_HOST, "0.0.0.0")))
                .hasMessageContaining("only allowed with " + SupportConfig.ENV_HOST + " on a loopback address");
        assertThatThrownBy(() -> SupportConfig.fromEnvironment(Map.of(SupportConfig.ENV_DEMO, "maybe")))
                .hasMessageContaining(SupportConfig.ENV_DEMO + " must be true or false");
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.foo.example", "127.0.0.1.evil.example", "127.example", "127.0.0.256", "0.0.0.0", "10.0.0.7",
            "::", "[::]", "::2", "localhost.example", "127.0.0.1:8080", "example.com"})
    void demoModeIsRefusedOnAnythingButALoopbackLiteral(String host) {
        assertThat(BindAddress.isLoopback(host)).as(host).isFalse();
        assertThatThrownBy(() -> SupportConfig.fromEnvironment(Map.of(SupportConfig.ENV_DEMO, "true", SupportConfig.ENV_HOST, host)))
                .as(host).hasMessageContaining("only allowed with " + SupportConfig.ENV_HOST + " on a loopback address");
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "127.1.2.3", "127.255.255.255", "localhost", "LOCALHOST", "::1", "[::1]",
            "0:0:0:0:0:0:0:1"})
    void demoModeIsAllowedOnALoopbackLiteral(String host) {
        assertThat(BindAddress.isLoopback(host)).as(host).isTrue();
        assertThat(SupportConfig.fromEnvironment(Map.of(SupportConfig.ENV_DEMO, "true", SupportConfig.ENV_HOST, host)).demo()).isTrue();
    }

    @Test
    void badTokenListsAreRefusedWithoutEchoingAToken() {
        Map<String, String> cases = Map.of(
                "alice:operator:short", "the token must be 16..512 characters",
                "alice:admin:" + ALICE, "the role must be viewer, support or operator",
                "alice:" + ALICE, "must be name:role:token",
                "alice:operator:" + ALICE + ",", "entry 2 is empty",
                "alice:operator:" + ALICE + ",Alice:viewer:" + BOB, "appears twice",
                "alice:operator:" + ALICE + ",bob:viewer:" + ALICE, "the same token is given to two people",
                "al ice:operator:" + ALICE, "the name must be",
                "alice:operator:" + ALICE.substring(0, 10) + " " + ALICE.substring(10), "printable ASCII");
        cases.forEach((spec, message) -> assertThatThrownBy(() -> SupportConfig.parseTokens(spec))
                .as(spec).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(ALICE).doesNotContain(BOB).doesNotContain("short")));
    }

    @Test
    void otherSettingsAreCheckedAndNamed() {
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).port(70000).build()).hasMessageContaining(SupportConfig.ENV_PORT);
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).sessionTtl(Duration.ofSeconds(5)).build())
                .hasMessageContaining(SupportConfig.ENV_SESSION_TTL);
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).publicOrigin("https://x.example/path").build())
                .hasMessageContaining(SupportConfig.ENV_PUBLIC_ORIGIN);
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).maxThreads(2).build()).hasMessageContaining(SupportConfig.ENV_THREADS);
        assertThatThrownBy(() -> SupportConfig.fromEnvironment(Map.of(SupportConfig.ENV_DEMO, "true", SupportConfig.ENV_PORT, "eighty")))
                .hasMessageContaining(SupportConfig.ENV_PORT + " must be a whole number");
        assertThat(SupportConfig.builder().token("ci", Role.SUPPORT, ALICE).build().tokens()).extracting(ApiToken::toString)
                .isEqualTo(List.of("ci:support:****"));
    }
}
