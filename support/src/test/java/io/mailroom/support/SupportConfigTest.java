package io.mailroom.support;

import io.mailroom.outbox.InvalidSettingException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Configuration: who may come in, and the refusals that keep a misconfigured server from starting,
 * each naming its setting. (How the service reads these from its environment: SupportEnvTest there.)
 */
class SupportConfigTest {

    private static final String ALICE = "alice-token-0123456789abcdef";
    private static final String BOB = "bob:with:colons-0123456789";

    @Test
    void tokensAreParsedAndOnlyTheirHashesAreKept() {
        SupportConfig c = SupportConfig.builder().tokens(" alice:operator:" + ALICE + " , bob:Viewer:" + BOB)
                .port(9090).sessionTtl(Duration.ofHours(2)).secureCookies(true).publicOrigin("https://support.example.com")
                .build();
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
        assertThatThrownBy(() -> SupportConfig.builder().build())
                .isInstanceOf(InvalidSettingException.class).hasMessageStartingWith("support tokens is empty")
                .hasMessageContaining("set support demo=true with support host=127.0.0.1")
                .satisfies(e -> assertThat(((InvalidSettingException) e).setting()).isEqualTo(SupportConfig.SETTING_TOKENS));
        SupportConfig demo = SupportConfig.builder().demo(true).build();
        assertThat(demo.demo()).isTrue();
        assertThat(demo.tokens()).isEmpty();
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).host("0.0.0.0").build())
                .hasMessageContaining("only allowed with support host on a loopback address");
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.foo.example", "127.0.0.1.evil.example", "127.example", "127.0.0.256", "0.0.0.0", "10.0.0.7",
            "::", "[::]", "::2", "localhost.example", "127.0.0.1:8080", "example.com"})
    void demoModeIsRefusedOnAnythingButALoopbackLiteral(String host) {
        assertThat(BindAddress.isLoopback(host)).as(host).isFalse();
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).host(host).build())
                .as(host).hasMessageContaining("only allowed with support host on a loopback address");
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "127.1.2.3", "127.255.255.255", "localhost", "LOCALHOST", "::1", "[::1]",
            "0:0:0:0:0:0:0:1"})
    void demoModeIsAllowedOnALoopbackLiteral(String host) {
        assertThat(BindAddress.isLoopback(host)).as(host).isTrue();
        assertThat(SupportConfig.builder().demo(true).host(host).build().demo()).isTrue();
    }

    @Test
    void badTokenListsAreRefusedWithoutEchoingAToken() {
        Map<String, String> cases = Map.of(
                "alice:operator:short", "the token must be 16..512 characters",
                "alice:admin:" + ALICE, "the role must be viewer, support or operator",
                "alice:" + ALICE, "must be name:role:token",
                "alice:operator:" + ALICE + ",", "support tokens entry 2 is empty",
                "alice:operator:" + ALICE + ",Alice:viewer:" + BOB, "appears twice",
                "alice:operator:" + ALICE + ",bob:viewer:" + ALICE, "the same token is given to two people",
                "al ice:operator:" + ALICE, "the name must be",
                "alice:operator:" + ALICE.substring(0, 10) + " " + ALICE.substring(10), "printable ASCII");
        cases.forEach((spec, message) -> assertThatThrownBy(() -> SupportConfig.parseTokens(spec))
                .as(spec).isInstanceOf(InvalidSettingException.class).hasMessageContaining(message)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(ALICE).doesNotContain(BOB).doesNotContain("short")));
    }

    @Test
    void otherSettingsAreCheckedAndNamed() {
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).port(70000).build())
                .hasMessage("support port must be between 0 and 65535, got 70000");
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).host(" ").build())
                .hasMessage("support host must not be blank");
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).sessionTtl(Duration.ofSeconds(5)).build())
                .hasMessageStartingWith(SupportConfig.SETTING_SESSION_TTL + " must be between");
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).publicOrigin("https://x.example/path").build())
                .hasMessageStartingWith(SupportConfig.SETTING_PUBLIC_ORIGIN + " must look like");
        assertThatThrownBy(() -> SupportConfig.builder().demo(true).maxThreads(2).build())
                .hasMessageStartingWith(SupportConfig.SETTING_THREADS + " must be between");
        assertThat(SupportConfig.builder().token("ci", Role.SUPPORT, ALICE).build().tokens()).extracting(ApiToken::toString)
                .isEqualTo(List.of("ci:support:****"));
    }
}
