package io.mailroom.email.service;

import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.config.TransportChain;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.email.dispatch.AmbiguityPolicy;
import io.mailroom.email.config.MailSettings;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.maintenance.RetentionConfig;
import io.mailroom.support.SupportConfig;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Everything the dispatcher service reads from its environment, validated at once: a bad value is
 * refused with the variable named, before anything starts. {@link #toString()} masks secrets and is
 * what the service logs once at start-up.
 *
 * @param dbStartupTimeout how long start-up waits for the database to answer before it gives up;
 *                         null waits as long as it takes ({@code MAILROOM_DB_STARTUP_TIMEOUT}, 0 or unset)
 * @param mail      the default sender and the body size limit of every email
 * @param topics    which topic is which template ({@code MAILROOM_TOPICS}, {@code MAILROOM_TOPICS_FILE};
 *                  unset: every template on {@code email.<template>}) and where operator templates
 *                  live ({@code MAILROOM_TEMPLATES_DIR})
 * @param transport the transports of every topic that names none: {@code smtp}, {@code http}, {@code capture}
 *                  or a fallback list such as {@code smtp,http} ({@code MAILROOM_TRANSPORT}); a topic line
 *                  may name others ({@code transport=http})
 * @param smtp      the SMTP transport's settings, null when no topic sends through SMTP
 * @param http      the HTTP mail API's settings, null when no topic sends through it
 * @param smtpAmbiguity what an unknown SMTP outcome leads to, null without SMTP
 * @param httpAmbiguity what an unknown HTTP outcome leads to, null without HTTP
 * @param db        direct or through a transaction-mode pooler, and the direct URLs for LISTEN and
 *                  migrations ({@code MAILROOM_DB_POOLER}, {@code MAILROOM_DB_SESSION_SETTINGS},
 *                  {@code MAILROOM_LISTEN_DB_URL}, {@code MAILROOM_MIGRATE_DB_URL})
 */
public record ServiceConfig(
        String jdbcUrl, String dbUser, String dbPassword, int poolSize, boolean migrate, Duration dbStartupTimeout,
        String transport, SmtpConfig smtp, HttpMailConfig http, AmbiguityPolicy smtpAmbiguity, AmbiguityPolicy httpAmbiguity,
        TransportPolicyConfig policies, MailSettings mail, DispatcherConfig dispatcher,
        RetentionConfig retention, Duration retentionInterval, Duration metricsSampleInterval,
        SupportConfig support, String host, int port, EmailTopics topics, WebhookConfig webhooks,
        SuppressionConfig suppression, DbTopology db) {

    public static final int DEFAULT_PORT = 8082;
    public static final String DEFAULT_HOST = "0.0.0.0";
    /** Sessions the service itself holds beside the dispatcher runtime: retention, the metrics sampler, the readiness check. */
    public static final int SERVICE_SESSIONS = 3;
    /**
     * Messages the service holds at once by default ({@code MAILROOM_CONCURRENCY}: claimed and not yet
     * completed), four per send the default bulkhead lets through ({@code MAILROOM_BULKHEAD_MAX_CONCURRENT},
     * 16). A message spends most of its time in flight outside its send: its claim's commit, the batch
     * reservation's commit before the send and the completion's after it. With only twice the sends, the
     * sends sat idle while a claim's messages waited for those commits (an HTTP drain on 2 cores: 2,900-3,350
     * emails/s with 32, 3,400-3,950 with 64, the sends at once unchanged; BENCHMARKS.md, issue 28's eighth
     * session). The bulkhead, not this, bounds what a provider or relay sees at once.
     */
    public static final int DEFAULT_CONCURRENCY = 64;
    /**
     * Handlers per reservation session by default: a reservation is a short transaction before a send
     * that takes far longer, and the handlers of one claim reserve together in one of them.
     */
    public static final int HANDLERS_PER_RESERVATION_SESSION = 16;
    public static final int MIN_RESERVATION_SESSIONS = 2;
    public static final int MAX_POOL_SIZE = 500;
    /** The support server's pool, when support runs in the dispatcher. */
    public static final int SUPPORT_POOL_SIZE = 4;

    public static ServiceConfig fromEnv(Map<String, String> env) {
        Settings s = new Settings(env);
        String url = s.string("MAILROOM_DB_URL");
        if (url == null) {
            throw new InvalidSettingException("MAILROOM_DB_URL",
                    "MAILROOM_DB_URL is required, e.g. jdbc:postgresql://127.0.0.1:5432/mailroom?user=postgres");
        }
        if (!url.startsWith("jdbc:postgresql://")) {
            throw new InvalidSettingException("MAILROOM_DB_URL", "MAILROOM_DB_URL must be a jdbc:postgresql:// URL");
        }
        String transport;
        try {
            transport = TransportChain.canonical(s.string("MAILROOM_TRANSPORT", "smtp"));
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException("MAILROOM_TRANSPORT", "MAILROOM_TRANSPORT " + e.getMessage());
        }
        // the default transports, and any other that a topic line names (transport=...): each needs its settings
        EmailTopics topics = DispatchEnv.topics(env);
        java.util.Set<String> used = new java.util.TreeSet<>(topics.namedTransports());
        used.addAll(TransportChain.parse(transport));
        SmtpConfig smtp = null;
        HttpMailConfig http = null;
        AmbiguityPolicy smtpAmbiguity = null;
        AmbiguityPolicy httpAmbiguity = null;
        TransportPolicyConfig policies = DispatchEnv.policies(env);
        // the handlers are MAILROOM_CONCURRENCY, of which the bulkhead lets MAILROOM_BULKHEAD_MAX_CONCURRENT send at
        // once; each transport keeps one connection per send that can be under way unless its pool size is set
        int concurrency = s.integer("MAILROOM_CONCURRENCY", DEFAULT_CONCURRENCY);
        int sendsAtOnce = Math.min(concurrency, policies.bulkhead().maxConcurrent());
        if (used.contains("smtp")) {
            smtp = transportSettings("smtp", transport, topics, () -> TransportEnv.smtp(env, sendsAtOnce));
            requirePoolFitsBulkhead(smtp, policies.bulkhead(), sendsAtOnce);
            DkimEnv.requireKeyForEverySender(smtp.dkim(), DispatchEnv.mail(env).from(), transport, topics);
            Integer resends = s.string("MAILROOM_SMTP_AMBIGUOUS_RESENDS") == null
                    ? null : s.integer("MAILROOM_SMTP_AMBIGUOUS_RESENDS", AmbiguityPolicy.DEFAULT_MAX_RESENDS);
            smtpAmbiguity = parse("MAILROOM_SMTP_AMBIGUOUS", () -> AmbiguityPolicy.forSmtp(s.string("MAILROOM_SMTP_AMBIGUOUS"), resends));
        }
        if (used.contains("http")) {
            http = transportSettings("http", transport, topics, () -> TransportEnv.http(env, sendsAtOnce));
            Duration window = s.duration("MAILROOM_HTTP_KEY_WINDOW", AmbiguityPolicy.DEFAULT_KEY_WINDOW);
            httpAmbiguity = parse("MAILROOM_HTTP_KEY_WINDOW", () -> AmbiguityPolicy.resendWithKey(window));
        }
        DbTopology read = DbTopology.fromEnv(env, bool(s, "MAILROOM_MIGRATE", true)); // its socket timeout may follow the lease below
        DispatcherConfig dispatcher = parse("MAILROOM_DISPATCHER_*", () -> DispatcherConfig.builder()
                .workerId(s.string("MAILROOM_WORKER_ID", DispatcherConfig.defaultWorkerId()))
                .batchSize(s.integer("MAILROOM_BATCH_SIZE", DispatcherConfig.DEFAULT_BATCH_SIZE))
                .concurrency(concurrency)
                .claimers(s.integer("MAILROOM_CLAIMERS", DispatcherConfig.DEFAULT_CLAIMERS))
                .lease(s.duration("MAILROOM_LEASE", DispatcherConfig.DEFAULT_LEASE))
                .pollInterval(s.duration("MAILROOM_POLL_INTERVAL", DispatcherConfig.DEFAULT_POLL_INTERVAL))
                .shutdownDeadline(s.duration("MAILROOM_SHUTDOWN_DEADLINE", DispatcherConfig.DEFAULT_SHUTDOWN_DEADLINE))
                .listenForNotifications(bool(s, "MAILROOM_LISTEN", true))
                .claimLinger(s.duration("MAILROOM_CLAIM_LINGER", DispatcherConfig.DEFAULT_CLAIM_LINGER))
                .completionLinger(s.duration("MAILROOM_COMPLETION_LINGER", DispatcherConfig.DEFAULT_COMPLETION_LINGER))
                .fullScanInterval(s.duration("MAILROOM_FULL_SCAN_INTERVAL", DispatcherConfig.DEFAULT_FULL_SCAN_INTERVAL))
                .markLookback(s.duration("MAILROOM_MARK_LOOKBACK", DispatcherConfig.DEFAULT_MARK_LOOKBACK))
                .sessionSettings(read.sessionSettings())
                .build());
        boolean socketSet = s.string(DbTopology.ENV_SOCKET_TIMEOUT) != null;
        // unset: the default follows the lease, so that a short lease (12 s in the chaos runs) is valid as it stands
        DbTopology db = socketSet ? read : read.withTimeouts(read.timeouts().withSocket(defaultSocketTimeout(dispatcher)));
        Duration socket = DbTopology.timeoutChecks(() -> db.timeouts().effectiveSocket(url));
        requireSocketTimeoutFits(socket, dispatcher,
                socket.equals(db.timeouts().socket()) ? DbTopology.ENV_SOCKET_TIMEOUT : "socketTimeout in MAILROOM_DB_URL");
        int fixed = fixedSessions(dispatcher);
        int poolSize = s.integer("MAILROOM_DB_POOL_SIZE", fixed + defaultReservationSessions(dispatcher.concurrency()));
        if (poolSize <= fixed || poolSize > MAX_POOL_SIZE) {
            throw new InvalidSettingException("MAILROOM_DB_POOL_SIZE", "MAILROOM_DB_POOL_SIZE must be " + (fixed + 1) + ".."
                    + MAX_POOL_SIZE + " (" + fixed + " sessions for " + dispatcher.claimers() + " claimers, the completer,"
                    + (dispatcher.listenForNotifications() ? " LISTEN," : "") + " maintenance, retention, metrics and"
                    + " readiness, plus at least one for the handlers' reservations), got " + poolSize);
        }
        Duration startupTimeout = s.duration("MAILROOM_DB_STARTUP_TIMEOUT", Duration.ZERO);
        if (startupTimeout.isNegative() || (!startupTimeout.isZero() && startupTimeout.compareTo(Duration.ofSeconds(1)) < 0)) {
            throw new InvalidSettingException("MAILROOM_DB_STARTUP_TIMEOUT", "MAILROOM_DB_STARTUP_TIMEOUT must be 0"
                    + " (wait as long as it takes) or at least 1s, got " + Settings.format(startupTimeout));
        }
        RetentionConfig retention = parse("MAILROOM_RETENTION_*", () -> RetentionConfig.builder()
                .hotRetention(s.duration("MAILROOM_RETENTION_HOT", RetentionConfig.defaults().hotRetention()))
                .historyRetention(s.duration("MAILROOM_RETENTION_HISTORY", RetentionConfig.defaults().historyRetention()))
                .build());
        Duration retentionInterval = s.duration("MAILROOM_RETENTION_INTERVAL", Duration.ofHours(1));
        if (retentionInterval.compareTo(Duration.ofSeconds(10)) < 0 || retentionInterval.compareTo(Duration.ofDays(1)) > 0) {
            throw new InvalidSettingException("MAILROOM_RETENTION_INTERVAL",
                    "MAILROOM_RETENTION_INTERVAL must be between 10s and 1 day, got " + Settings.format(retentionInterval));
        }
        Duration metricsSample = s.duration("MAILROOM_METRICS_SAMPLE_INTERVAL", Duration.ofSeconds(15));
        if (metricsSample.compareTo(Duration.ofMillis(100)) < 0 || metricsSample.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new InvalidSettingException("MAILROOM_METRICS_SAMPLE_INTERVAL",
                    "MAILROOM_METRICS_SAMPLE_INTERVAL must be between 100ms and 10m, got " + Settings.format(metricsSample));
        }
        // The support API and console run in the dispatcher when MAILROOM_SUPPORT=on (tokens required,
        // unless MAILROOM_SUPPORT_DEMO on loopback); off, they can run elsewhere on the same database.
        SupportConfig support = bool(s, "MAILROOM_SUPPORT", false)
                ? parse("MAILROOM_SUPPORT_*", () -> SupportEnv.config(env)) : null;
        int port = s.integer("MAILROOM_DISPATCHER_PORT", DEFAULT_PORT);
        if (port < 0 || port > 65535) {
            throw new InvalidSettingException("MAILROOM_DISPATCHER_PORT", "MAILROOM_DISPATCHER_PORT must be 0..65535, got " + port);
        }
        return new ServiceConfig(url, s.string("MAILROOM_DB_USER"), s.secret("MAILROOM_DB_PASSWORD"), poolSize,
                bool(s, "MAILROOM_MIGRATE", true), startupTimeout.isZero() ? null : startupTimeout, transport, smtp, http,
                smtpAmbiguity, httpAmbiguity,
                policies, DispatchEnv.mail(env), dispatcher, retention, retentionInterval,
                metricsSample, support, s.string("MAILROOM_DISPATCHER_HOST", DEFAULT_HOST), port, topics,
                WebhookConfig.fromEnv(env), WebhookConfig.suppression(env), db);
    }

    /**
     * A session silent for the socket timeout is dropped: shorter than the lease, so that a half-open
     * session gives up (and its claims go back) before the lease runs out under it; longer than the
     * statement timeout, so that the server cancels a slow statement before the client drops its session.
     */
    /**
     * The socket timeout when {@code MAILROOM_DB_SOCKET_TIMEOUT} is unset: half the lease, at most
     * {@link io.mailroom.outbox.DbTimeouts#DEFAULT_SOCKET} (30 s with the default 60 s lease), raised
     * past the statement timeout where the lease leaves room for that (12 s lease: 11 s).
     */
    static Duration defaultSocketTimeout(DispatcherConfig dispatcher) {
        long lease = dispatcher.lease().toSeconds();
        long socket = Math.min(io.mailroom.outbox.DbTimeouts.DEFAULT_SOCKET.toSeconds(), lease / 2);
        Duration statement = dispatcher.statementTimeout();
        if (statement != null) {
            long floor = (statement.toMillis() + 999) / 1000 + 1;
            if (socket < floor && floor < lease) {
                socket = floor;
            }
        }
        return Duration.ofSeconds(Math.max(1, socket));
    }

    private static void requireSocketTimeoutFits(Duration socket, DispatcherConfig dispatcher, String setting) {
        if (socket.isZero() || socket.compareTo(dispatcher.lease()) >= 0) {
            throw new InvalidSettingException(setting, setting + " (" + (socket.isZero() ? "0, none" : Settings.format(socket))
                    + ") must be shorter than MAILROOM_LEASE (" + Settings.format(dispatcher.lease()) + "): a session"
                    + " cut off without a close must be given up before the claims it holds expire");
        }
        Duration statement = dispatcher.statementTimeout();
        // a lease no longer than the statement timeout leaves no room for both bounds: the lease's comes first
        if (statement != null && statement.plusSeconds(1).compareTo(dispatcher.lease()) < 0 && socket.compareTo(statement) <= 0) {
            throw new InvalidSettingException(setting, setting + " (" + Settings.format(socket) + ") must be longer than"
                    + " the statement timeout (" + Settings.format(statement) + "), which lets the server cancel a slow"
                    + " statement first");
        }
    }

    /**
     * The policy for an unknown outcome of {@code transportName}, or of a fallback list of them: a list
     * with SMTP takes SMTP's, since the unknown outcome may have been SMTP's (see README, "Fallback
     * providers"). Capture stores by key, replacing an earlier capture: repeating it is always safe.
     */
    public AmbiguityPolicy ambiguity(String transportName) {
        List<String> chain = TransportChain.parse(transportName);
        if (chain.size() > 1) {
            return ambiguity(chain.contains("smtp") ? "smtp" : chain.getFirst());
        }
        if (TransportChain.CAPTURE.equals(transportName)) {
            return AmbiguityPolicy.resendWithKey(AmbiguityPolicy.DEFAULT_KEY_WINDOW);
        }
        AmbiguityPolicy policy = "smtp".equals(transportName) ? smtpAmbiguity : "http".equals(transportName) ? httpAmbiguity : null;
        if (policy == null) {
            throw new IllegalArgumentException("this service has no transport '" + transportName + "'");
        }
        return policy;
    }

    /** The policy for an unknown outcome of the default transport. */
    public AmbiguityPolicy ambiguity() {
        return ambiguity(transport);
    }

    /** The default transport, or the first of the default fallback list. */
    public String firstTransport() {
        return TransportChain.parse(transport).getFirst();
    }

    /** The transports this service sends through, each once: the default ones first. */
    public List<String> transports() {
        List<String> names = new java.util.ArrayList<>(TransportChain.parse(transport));
        if (!names.contains(TransportChain.CAPTURE) && topics.namedTransports().contains(TransportChain.CAPTURE)) {
            names.add(TransportChain.CAPTURE);
        }
        if (smtp != null && !names.contains("smtp")) {
            names.add("smtp");
        }
        if (http != null && !names.contains("http")) {
            names.add("http");
        }
        return List.copyOf(names);
    }

    /**
     * The SMTP pool and the bulkhead must agree: a pool smaller than the sends the bulkhead (and
     * the handlers) let through at once makes the others wait for a connection, up to
     * {@code MAILROOM_SMTP_CONNECT_TIMEOUT}, and then give up; a larger one is never used beyond
     * the bulkhead (a pool of 32 behind a bulkhead of 16 only ever opened 16 connections).
     */
    static void requirePoolFitsBulkhead(SmtpConfig smtp, TransportPolicyConfig.BulkheadSettings bulkhead, int sendsAtOnce) {
        if (smtp.poolSize() < sendsAtOnce) {
            String setting = sendsAtOnce > SmtpConfig.MAX_POOL_SIZE ? "MAILROOM_BULKHEAD_MAX_CONCURRENT" : "MAILROOM_SMTP_POOL_SIZE";
            throw new InvalidSettingException(setting, "MAILROOM_SMTP_POOL_SIZE (" + smtp.poolSize() + ") is smaller than the "
                    + sendsAtOnce + " sends the bulkhead lets through at once (MAILROOM_BULKHEAD_MAX_CONCURRENT "
                    + bulkhead.maxConcurrent() + ", MAILROOM_CONCURRENCY at most as many): the others would wait for a"
                    + " connection and fail; set MAILROOM_BULKHEAD_MAX_CONCURRENT to at most " + smtp.poolSize()
                    + (sendsAtOnce > SmtpConfig.MAX_POOL_SIZE ? " (the pool holds at most " + SmtpConfig.MAX_POOL_SIZE + ")" : "")
                    + ", or leave MAILROOM_SMTP_POOL_SIZE unset to get one connection per send");
        }
        if (smtp.poolSize() > bulkhead.maxConcurrent()) {
            throw new InvalidSettingException("MAILROOM_SMTP_POOL_SIZE", "MAILROOM_SMTP_POOL_SIZE (" + smtp.poolSize()
                    + ") is larger than MAILROOM_BULKHEAD_MAX_CONCURRENT (" + bulkhead.maxConcurrent() + "): only "
                    + bulkhead.maxConcurrent() + " connections would ever be used; raise the bulkhead, or leave"
                    + " MAILROOM_SMTP_POOL_SIZE unset (it follows the bulkhead)");
        }
    }

    /** A transport's settings; when only topic lines need it, its errors say which topics. */
    private static <T> T transportSettings(String name, String defaultTransport, EmailTopics topics, java.util.function.Supplier<T> read) {
        try {
            return read.get();
        } catch (InvalidSettingException e) {
            if (TransportChain.parse(defaultTransport).contains(name)) {
                throw e;
            }
            List<String> which = topics.routes().values().stream()
                    .filter(r -> r.transport() != null && TransportChain.parse(r.transport()).contains(name))
                    .map(EmailTopics.Route::topic).sorted().toList();
            throw new InvalidSettingException(e.setting(), e.getMessage() + " (topics " + String.join(", ", which)
                    + " send through " + name + ")");
        }
    }

    /**
     * Sessions the dispatcher's own pool needs, whatever the concurrency: the runtime's
     * ({@link Dispatcher#sessionsNeeded}: claimers, completer, LISTEN, maintenance) and the
     * service's ({@link #SERVICE_SESSIONS}).
     */
    public static int fixedSessions(DispatcherConfig dispatcher) {
        return Dispatcher.sessionsNeeded(dispatcher) + SERVICE_SESSIONS;
    }

    /** One reservation session per {@value #HANDLERS_PER_RESERVATION_SESSION} handlers, at least {@value #MIN_RESERVATION_SESSIONS}. */
    public static int defaultReservationSessions(int concurrency) {
        return Math.max(MIN_RESERVATION_SESSIONS, (concurrency + HANDLERS_PER_RESERVATION_SESSION - 1) / HANDLERS_PER_RESERVATION_SESSION);
    }

    /** The dispatcher's pool: the fixed sessions of {@link #fixedSessions}. */
    public int dispatcherSessions() {
        return fixedSessions(dispatcher);
    }

    /** The handlers' pool for their idempotency reservations: what {@link #poolSize()} leaves beyond the fixed sessions. */
    public int reservationSessions() {
        return poolSize - dispatcherSessions();
    }

    /** Every session this service opens: {@link #poolSize()}, plus the support server's and the webhook server's pools when on. */
    public int totalSessions() {
        return poolSize + (support == null ? 0 : SUPPORT_POOL_SIZE) + (webhooks == null ? 0 : WebhookConfig.POOL_SIZE);
    }

    private static boolean bool(Settings s, String name, boolean defaultValue) {
        String v = s.string(name);
        if (v == null) {
            return defaultValue;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "1", "on" -> true;
            case "false", "no", "0", "off" -> false;
            default -> throw new InvalidSettingException(name, name + " must be true or false, got '" + v + "'");
        };
    }

    private static <T> T parse(String name, java.util.function.Supplier<T> parser) {
        try {
            return parser.get();
        } catch (InvalidSettingException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException(name, e.getMessage());
        }
    }

    public ServiceConfig withPort(int newPort) {
        return new ServiceConfig(jdbcUrl, dbUser, dbPassword, poolSize, migrate, dbStartupTimeout, transport, smtp, http,
                smtpAmbiguity, httpAmbiguity, policies, mail, dispatcher, retention, retentionInterval, metricsSampleInterval, support, host, newPort, topics,
                webhooks, suppression, db);
    }

    @Override
    public String toString() {
        return "ServiceConfig[db=" + maskUrl(jdbcUrl) + " (" + db + ")" + (dbUser == null ? "" : ", dbUser=" + dbUser)
                + ", dbPassword=" + Settings.mask(dbPassword) + ", poolSize=" + poolSize + " (dispatcher " + dispatcherSessions()
                + " + reservations " + reservationSessions() + ")" + ", migrate=" + migrate
                + ", dbStartupTimeout=" + (dbStartupTimeout == null ? "none" : Settings.format(dbStartupTimeout))
                + ", transport=" + transport + (smtp == null ? "" : ", " + smtp + ", smtpAmbiguity=" + smtpAmbiguity)
                + (http == null ? "" : ", " + http + ", httpAmbiguity=" + httpAmbiguity)
                + ", policies=" + policies + ", mail=" + mail + ", dispatcher=" + dispatcher
                + ", retention=" + retention + " every " + Settings.format(retentionInterval)
                + ", support=" + (support == null ? "off" : support)
                + ", webhooks=" + (webhooks == null ? "off" : webhooks) + ", softBounceLimit=" + suppression.softBounceLimit()
                + ", erasureKey=" + (suppression.erasureKey().isConfigured() ? "configured" : "stored in the database")
                + ", listen=" + host + ":" + port + "]";
    }

    /** The URL with any password parameter masked. */
    static String maskUrl(String url) {
        return url.replaceAll("(?i)(password=)[^&]*", "$1****");
    }
}
