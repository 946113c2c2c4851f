package io.mailroom.bench;

/**
 * Points logback at this tool's configuration ({@code mailroom-bench-logback.xml}: warnings only,
 * to stderr) before anything logs. A plain {@code logback.xml} would clash with the one inside the
 * order service's jar on the same class path, and logback reports such a clash on stdout, which
 * the dispatcher child processes use to talk to their parent.
 */
final class Logging {

    static final String CONFIG_PROPERTY = "logback.configurationFile";
    static final String CONFIG_RESOURCE = "mailroom-bench-logback.xml";

    private Logging() {
    }

    static void configure() {
        if (System.getProperty(CONFIG_PROPERTY) == null
                && Logging.class.getClassLoader().getResource("logback-test.xml") == null) {
            System.setProperty(CONFIG_PROPERTY, CONFIG_RESOURCE);
        }
    }
}
