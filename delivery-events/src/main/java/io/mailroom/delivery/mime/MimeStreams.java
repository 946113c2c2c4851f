package io.mailroom.delivery.mime;

import jakarta.mail.util.StreamProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ServiceConfigurationError;

/**
 * Names Jakarta Mail's {@link StreamProvider} once, so that the API stops searching the class path
 * for it on every MIME part.
 *
 * <p>jakarta.mail-api 2.1 asks {@code StreamProvider.provider()} afresh for every {@code Multipart}
 * and {@code BodyPart} it creates, every part it writes and every encoded word it encodes or
 * decodes. Each call goes through its {@code FactoryFinder}, which first reads the system property
 * named after the interface and, when that is unset, runs a {@code ServiceLoader} that reads
 * {@code META-INF/services} out of every jar on the class path (jakartaee/mail-api#861, open). Over
 * SMTP that search was a third of the dispatcher's CPU per email (BENCHMARKS.md, issue 28, "Jakarta
 * Mail's provider search"). With the property set, {@code FactoryFinder} loads the class it names,
 * which is already loaded, and makes one with its public constructor: the same provider, without
 * the search.
 *
 * <p>{@link #pin()} sets the property to the class the search finds now, once per JVM, and only
 * where nobody set it: an application that chose its provider keeps its choice, and one that finds
 * no provider is left as it was (its first MIME part fails with the API's own message, as before).
 * The property is global, and {@code FactoryFinder} loads the class it names through the context
 * class loader of whichever thread asks, where a class it cannot load is an error rather than a
 * fall back to the search. So it is set only when the class is seen from Jakarta Mail's own class
 * loader, the current thread's context class loader and the system class loader (the one threads
 * such as the common fork-join pool's carry, and the parent of the usual others): a plain class
 * path, as the dispatcher service runs. Inside a Spring Boot fat jar the system class loader does
 * not see the jar's libraries, so the search stays on there; an application whose every thread
 * sees Angus may set the property itself (docs/ADOPTING.md).
 */
public final class MimeStreams {

    /** The system property {@code FactoryFinder} reads before it searches: the interface's name. */
    static final String PROPERTY = "jakarta.mail.util.StreamProvider";

    private static final Logger log = LoggerFactory.getLogger(MimeStreams.class);
    private static volatile boolean done;

    private MimeStreams() {
    }

    /** Sets the property {@value #PROPERTY} to the provider the search finds now, unless it is set; cheap after the first call. */
    public static void pin() {
        if (done) {
            return;
        }
        synchronized (MimeStreams.class) {
            if (!done) {
                pinOnce();
                done = true;
            }
        }
    }

    /** One attempt, whatever came before (tests call it directly). */
    static void pinOnce() {
        String chosen = System.getProperty(PROPERTY);
        if (chosen != null) {
            log.debug("Jakarta Mail's stream provider is named already ({}={}); left as it is", PROPERTY, chosen);
            return;
        }
        String found;
        try {
            found = StreamProvider.provider().getClass().getName();
        } catch (RuntimeException | ServiceConfigurationError e) {
            log.debug("Jakarta Mail found no stream provider; its search is left on ({})", e.toString());
            return;
        }
        if (!visibleFrom(found, StreamProvider.class.getClassLoader())
                || !visibleFrom(found, Thread.currentThread().getContextClassLoader())
                || !visibleFrom(found, ClassLoader.getSystemClassLoader())) {
            log.debug("Jakarta Mail's stream provider {} is not visible from every class loader it is looked up in; its search is left on",
                    found);
            return;
        }
        System.setProperty(PROPERTY, found);
        log.debug("Jakarta Mail's stream provider named once: {}={}", PROPERTY, found);
    }

    private static boolean visibleFrom(String className, ClassLoader loader) {
        if (loader == null) {
            return true; // FactoryFinder skips a null loader and goes on to the next
        }
        try {
            return StreamProvider.class.isAssignableFrom(Class.forName(className, false, loader));
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

}
