package io.mailroom.db;

import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fails when the committed jOOQ classes no longer match what the migrations generate. To accept a
 * schema change, regenerate them:
 * {@code ./mvnw -pl db -am test -Dtest=JooqCodegenDriftTest -Dsurefire.failIfNoSpecifiedTests=false -Dmailroom.jooq.write=true}
 */
class JooqCodegenDriftTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void committedClassesMatchTheMigrations() throws Exception {
        Path committed = Path.of(System.getProperty("mailroom.jooq.generatedDir", "src/generated/java"));
        if (Boolean.getBoolean("mailroom.jooq.write")) {
            JooqCodegen.generate(pg.database(), committed);
            return;
        }
        Path fresh = Files.createTempDirectory("jooq-drift");
        JooqCodegen.generate(pg.database(), fresh);

        Map<String, String> expected = read(fresh);
        Map<String, String> actual = read(committed);
        List<String> differences = new ArrayList<>();
        expected.forEach((file, text) -> {
            if (!actual.containsKey(file)) {
                differences.add("missing: " + file);
            } else if (!actual.get(file).equals(text)) {
                differences.add("changed: " + file);
            }
        });
        actual.keySet().stream().filter(f -> !expected.containsKey(f)).forEach(f -> differences.add("extra: " + f));

        assertThat(expected).as("generation produced classes").isNotEmpty();
        assertThat(differences)
                .as("jOOQ classes in %s drifted from the migrations; regenerate with -Dmailroom.jooq.write=true "
                        + "(see this test's javadoc)", committed)
                .isEmpty();
    }

    private static Map<String, String> read(Path root) throws IOException {
        Map<String, String> files = new TreeMap<>();
        if (!Files.isDirectory(root)) {
            return files;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.filter(Files::isRegularFile).filter(f -> f.toString().endsWith(".java")).toList()) {
                files.put(root.relativize(p).toString().replace('\\', '/'), Files.readString(p));
            }
        }
        return files;
    }
}
