package io.mailroom.testing;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class ChildJvmTest {

    private static final List<String> SMALL = List.of("-Xmx64m", "-XX:TieredStopAtLevel=1", "-Xshare:auto");

    @TempDir
    Path dir;

    @Test
    void theChildGetsNoneOfTheCallersMailroomVariables() {
        Map<String, String> inherited = Map.of("PATH", "/bin", "MAILROOM_DB_PASSWORD", "secret", "HOME", "/root");
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_DB_URL", "jdbc:postgresql://db/app");
        env.put("HOME", null);
        assertThat(ChildJvm.environment(inherited, env))
                .isEqualTo(Map.of("PATH", "/bin", "MAILROOM_DB_URL", "jdbc:postgresql://db/app"));
    }

    @Test
    void aControlledChildTalksInLinesAndItsStderrGoesToTheLog() throws Exception {
        Path log = dir.resolve("logs/echo.log");
        try (ChildJvm child = ChildJvm.of("echo", EchoMain.class.getName()).jvmOptions(SMALL).args(List.of("a", "b"))
                .env(Map.of("ECHO_PROBE", "42")).log(log).controlled().start()) {
            child.send("hello");
            assertThat(child.expect("ECHO ")).isEqualTo("ECHO hello");
            child.send("ENV ECHO_PROBE");
            assertThat(child.expect("VALUE ")).isEqualTo("VALUE 42");
            child.send("EXIT");
            assertThatThrownBy(() -> child.expect("ECHO ")).hasMessageContaining("echo ended before answering ECHO")
                    .hasMessageContaining(log.toString());
            assertThat(child.stop(10)).isEqualTo(3);
            assertThat(Files.readString(log)).contains("started with a b").doesNotContain("noise");
        }
    }

    @Test
    void aServiceWritesBothStreamsToItsLogReplacedOrAppended() throws Exception {
        Path log = dir.resolve("service.log");
        Files.writeString(log, "an earlier run\n");
        ChildJvm first = ChildJvm.of("service", EchoMain.class.getName()).jvmOptions(SMALL).args(List.of("one"))
                .log(log).start();
        assertThatThrownBy(() -> first.send("x")).hasMessageContaining("service is not a controlled child");
        await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("noise"));
        first.kill9();
        assertThat(first.isAlive()).isFalse();
        assertThat(Files.readString(log)).doesNotContain("an earlier run").contains("started with one");

        ChildJvm second = ChildJvm.of("service", EchoMain.class.getName()).jvmOptions(SMALL).args(List.of("two"))
                .log(log).appendLog().start();
        await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("started with two"));
        assertThat(second.stop(10)).isNotEqualTo(-1);
        assertThat(Files.readString(log)).contains("started with one");
    }

    @Test
    void aChildNeedsALog() {
        assertThatThrownBy(() -> ChildJvm.of("nolog", EchoMain.class.getName()).start())
                .hasMessage("nolog: no log file given");
    }
}
