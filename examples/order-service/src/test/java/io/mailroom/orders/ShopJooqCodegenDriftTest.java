package io.mailroom.orders;

import io.mailroom.testing.PostgresExtension;
import org.jooq.codegen.GenerationTool;
import org.jooq.meta.jaxb.Configuration;
import org.jooq.meta.jaxb.Database;
import org.jooq.meta.jaxb.ForcedType;
import org.jooq.meta.jaxb.Generate;
import org.jooq.meta.jaxb.Generator;
import org.jooq.meta.jaxb.Jdbc;
import org.jooq.meta.jaxb.Target;
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
 * The shop's jOOQ classes ({@code io.mailroom.orders.jooq}, committed under src/generated/java) are
 * generated from the shop's own migrations in the business's default schema; this fails when they
 * drift. Regenerate with
 * {@code ./mvnw -pl examples/order-service -am test -Dtest=ShopJooqCodegenDriftTest -Dsurefire.failIfNoSpecifiedTests=false -Dmailroom.jooq.write=true}
 */
class ShopJooqCodegenDriftTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void committedClassesMatchTheShopsMigrations() throws Exception {
        Path committed = Path.of(System.getProperty("mailroom.jooq.generatedDir", "src/generated/java"));
        if (Boolean.getBoolean("mailroom.jooq.write")) {
            generate(committed);
            return;
        }
        Path fresh = Files.createTempDirectory("shop-jooq-drift");
        generate(fresh);
        Map<String, String> expected = read(fresh);
        Map<String, String> actual = read(committed);
        List<String> differences = new ArrayList<>();
        expected.forEach((file, text) -> {
            if (!text.equals(actual.get(file))) {
                differences.add((actual.containsKey(file) ? "changed: " : "missing: ") + file);
            }
        });
        actual.keySet().stream().filter(f -> !expected.containsKey(f)).forEach(f -> differences.add("extra: " + f));
        assertThat(expected).as("generation produced classes").isNotEmpty();
        assertThat(differences).as("shop jOOQ classes drifted; regenerate (see the javadoc)").isEmpty();
    }

    private static void generate(Path directory) throws Exception {
        var db = pg.database();
        GenerationTool.generate(new Configuration()
                .withJdbc(new Jdbc().withDriver("org.postgresql.Driver").withUrl(db.jdbcUrl())
                        .withUser(db.user()).withPassword(db.password()))
                .withGenerator(new Generator()
                        .withName("org.jooq.codegen.JavaGenerator")
                        .withDatabase(new Database()
                                .withName("org.jooq.meta.postgres.PostgresDatabase")
                                .withInputSchema("public")
                                .withOutputSchemaToDefault(true)
                                .withExcludes(ShopSchema.HISTORY_TABLE)
                                .withForcedTypes(new ForcedType().withName("INSTANT")
                                        .withIncludeTypes("(?i:timestamp\\ with\\ time\\ zone|timestamptz)")))
                        .withGenerate(new Generate().withGeneratedAnnotation(false).withJavaTimeTypes(true)
                                .withDeprecated(false).withRecords(true).withPojos(false).withFluentSetters(true))
                        .withTarget(new Target().withPackageName("io.mailroom.orders.jooq")
                                .withDirectory(directory.toString()).withClean(true))));
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
