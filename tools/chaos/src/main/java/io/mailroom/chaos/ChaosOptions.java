package io.mailroom.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * What one chaos run does. {@link #shortRun(Transport)} is the CI variant (about a minute of load),
 * {@link #longRun()} the one run by hand; any field can be overridden on the command line
 * ({@link #parse(String[])}).
 *
 * @param transport           which provider the dispatchers send to
 * @param seed                seeds every random choice (fault times, victims, provider faults)
 * @param load                how long orders are written and faults injected
 * @param ordersPerSecond     steady order rate of the writer
 * @param dispatchers         dispatcher processes
 * @param killEvery           mean interval between {@code kill -9}s of a random dispatcher (0: none)
 * @param terminateEvery      mean interval between {@code pg_terminate_backend} rounds over all
 *                            dispatcher sessions (0: none)
 * @param outageAt            when the provider outage starts, from the start of the load
 * @param outage              how long the provider answers 503 (HTTP) or is down (SMTP sink killed)
 * @param sinkKillEvery       SMTP only: mean interval between kill -9s of the sink (restarted at once)
 * @param restartPostgres     restart the PostgreSQL server once, at {@code load * 0.7} (by hand only)
 * @param restartCommand      the shell command that restarts it
 * @param drain               longest wait after the load for every message to finish
 * @param lease               dispatcher lease ({@code MAILROOM_LEASE})
 * @param breakerOpenWait     {@code MAILROOM_BREAKER_OPEN_WAIT}
 * @param httpTimeout         {@code MAILROOM_HTTP_TIMEOUT}; the provider holds hung answers 1 s longer
 * @param keyWindow           how long the provider remembers an idempotency key, and
 *                            {@code MAILROOM_HTTP_KEY_WINDOW}
 * @param p500                provider: share of requests answered 500
 * @param p429                provider: share answered 429 with Retry-After
 * @param pHang               provider: share accepted and never answered in time
 * @param pDropBeforeData     sink: share of sessions dropped at MAIL FROM
 * @param p451                sink: share of messages deferred with 451 after DATA
 * @param pDropAfterData      sink: share delivered and then dropped without the final reply
 * @param workDir             logs and records of this run
 */
public record ChaosOptions(Transport transport, long seed, Duration load, double ordersPerSecond, int dispatchers,
                           Duration killEvery, Duration terminateEvery, Duration outageAt, Duration outage,
                           Duration sinkKillEvery, boolean restartPostgres, String restartCommand, Duration drain,
                           Duration lease, Duration breakerOpenWait, Duration httpTimeout, Duration keyWindow,
                           double p500, double p429, double pHang, double pDropBeforeData, double p451,
                           double pDropAfterData, Path workDir) {

    public enum Transport { HTTP, SMTP }

    public ChaosOptions {
        if (dispatchers < 1) {
            throw new IllegalArgumentException("--dispatchers must be at least 1");
        }
        if (ordersPerSecond <= 0 || ordersPerSecond > 2000) {
            throw new IllegalArgumentException("--rate must be in (0, 2000] orders per second");
        }
        if (outageAt.plus(outage).compareTo(load) > 0) {
            throw new IllegalArgumentException("the outage (--outage-at + --outage) must end within --load");
        }
        if (restartPostgres && (restartCommand == null || restartCommand.isBlank())) {
            throw new IllegalArgumentException("--restart-postgres needs --restart-command");
        }
    }

    /**
     * Under a minute of load with every kind of fault, for CI: 50 s over HTTP (a 10 s outage), 35 s
     * over SMTP (a 6 s outage); both together stay within three minutes on two cores.
     */
    public static ChaosOptions shortRun(Transport transport) {
        boolean http = transport == Transport.HTTP;
        return new ChaosOptions(transport, 20260301L, Duration.ofSeconds(http ? 50 : 35), 15, 3,
                Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(http ? 18 : 12),
                Duration.ofSeconds(http ? 10 : 6), Duration.ofSeconds(15), false, null, Duration.ofSeconds(75),
                Duration.ofSeconds(12), Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMinutes(30),
                0.05, 0.01, 0.02, 0.02, 0.02, 0.02, defaultWorkDir(transport));
    }

    /** Twenty-five minutes at 16 orders/s (24,000 orders), a 30 s outage and one PostgreSQL restart. */
    public static ChaosOptions longRun() {
        return new ChaosOptions(Transport.HTTP, 20260302L, Duration.ofMinutes(25), 16, 3,
                Duration.ofSeconds(45), Duration.ofSeconds(30), Duration.ofMinutes(8), Duration.ofSeconds(30),
                Duration.ofSeconds(60), true, defaultRestartCommand(), Duration.ofMinutes(5),
                Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2), Duration.ofMinutes(30),
                0.05, 0.01, 0.02, 0.02, 0.02, 0.02, defaultWorkDir(Transport.HTTP));
    }

    /**
     * {@code --long} or {@code --short} (default) picks the preset; then {@code --transport http|smtp},
     * {@code --seed}, {@code --load 20m}, {@code --rate 16}, {@code --dispatchers 3}, {@code --kill-every 45s},
     * {@code --terminate-every 30s}, {@code --outage-at 8m}, {@code --outage 30s}, {@code --sink-kill-every 60s},
     * {@code --restart-postgres} / {@code --no-restart-postgres}, {@code --restart-command '...'},
     * {@code --drain 5m}, {@code --lease 15s}, {@code --breaker-open-wait 10s}, {@code --http-timeout 2s},
     * {@code --key-window 30m}, {@code --p500}, {@code --p429}, {@code --p-hang}, {@code --p-drop-before},
     * {@code --p451}, {@code --p-drop-after}, {@code --work-dir}. The database is created on the server
     * named by {@code $MAILROOM_TEST_DB_URL}, as the tests do (embedded PostgreSQL without it).
     */
    public static ChaosOptions parse(String[] argv) {
        Args a = Args.parse(argv);
        Transport transport = Transport.valueOf(a.string("transport", "http").toUpperCase(Locale.ROOT));
        ChaosOptions base = a.flag("long") ? longRun() : shortRun(transport);
        boolean restart = a.has("no-restart-postgres") ? false : a.has("restart-postgres") ? a.flag("restart-postgres") : base.restartPostgres;
        return new ChaosOptions(transport, a.longValue("seed", base.seed), a.duration("load", base.load),
                a.decimal("rate", base.ordersPerSecond), a.integer("dispatchers", base.dispatchers),
                a.duration("kill-every", base.killEvery), a.duration("terminate-every", base.terminateEvery),
                a.duration("outage-at", base.outageAt), a.duration("outage", base.outage),
                a.duration("sink-kill-every", base.sinkKillEvery), restart,
                a.string("restart-command", base.restartCommand == null ? defaultRestartCommand() : base.restartCommand),
                a.duration("drain", base.drain), a.duration("lease", base.lease),
                a.duration("breaker-open-wait", base.breakerOpenWait), a.duration("http-timeout", base.httpTimeout),
                a.duration("key-window", base.keyWindow), a.decimal("p500", base.p500), a.decimal("p429", base.p429),
                a.decimal("p-hang", base.pHang), a.decimal("p-drop-before", base.pDropBeforeData),
                a.decimal("p451", base.p451), a.decimal("p-drop-after", base.pDropAfterData),
                a.has("work-dir") ? Path.of(a.string("work-dir", null)) : defaultWorkDir(transport));
    }

    public ChaosOptions withWorkDir(Path dir) {
        return new ChaosOptions(transport, seed, load, ordersPerSecond, dispatchers, killEvery, terminateEvery, outageAt,
                outage, sinkKillEvery, restartPostgres, restartCommand, drain, lease, breakerOpenWait, httpTimeout,
                keyWindow, p500, p429, pHang, pDropBeforeData, p451, pDropAfterData, dir);
    }

    public ChaosOptions withLoad(Duration newLoad, Duration newOutageAt, Duration newOutage) {
        return new ChaosOptions(transport, seed, newLoad, ordersPerSecond, dispatchers, killEvery, terminateEvery,
                newOutageAt, newOutage, sinkKillEvery, restartPostgres, restartCommand, drain, lease, breakerOpenWait,
                httpTimeout, keyWindow, p500, p429, pHang, pDropBeforeData, p451, pDropAfterData, workDir);
    }

    /** How long the provider holds an answer it will never give in time. */
    public Duration hang() {
        return httpTimeout.plusSeconds(1);
    }

    /** When the PostgreSQL restart happens, from the start of the load. */
    public Duration restartAt() {
        return Duration.ofMillis((long) (load.toMillis() * 0.7));
    }

    /** Where the summary table goes: {@code chaos-summary.md} (HTTP) or {@code chaos-summary-smtp.md} beside the work dir. */
    public Path summaryFile() {
        return workDir.toAbsolutePath().resolveSibling(transport == Transport.HTTP ? "chaos-summary.md" : "chaos-summary-smtp.md");
    }

    static Path defaultWorkDir(Transport transport) {
        return Path.of("target", "chaos-" + transport.name().toLowerCase(Locale.ROOT));
    }

    /** {@code pg_ctlcluster --skip-systemctl-redirect <newest version> main restart}, or null without a cluster. */
    static String defaultRestartCommand() {
        Path etc = Path.of("/etc/postgresql");
        if (!Files.isDirectory(etc)) {
            return null;
        }
        try (Stream<Path> versions = Files.list(etc)) {
            return versions.map(p -> p.getFileName().toString()).filter(v -> v.matches("\\d+"))
                    .max(Comparator.comparingInt(Integer::parseInt))
                    .map(v -> "pg_ctlcluster --skip-systemctl-redirect " + v + " main restart")
                    .orElse(null);
        } catch (java.io.IOException e) {
            return null;
        }
    }
}
