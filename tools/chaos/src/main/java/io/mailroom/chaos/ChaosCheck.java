package io.mailroom.chaos;

import io.mailroom.email.transport.smtp.MessageIds;
import io.mailroom.orders.OrderService;
import org.jooq.DSLContext;
import org.jooq.Record;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The checks at the end of a chaos run, from three sources that do not depend on each other: the
 * database (orders, outbox rows, attempts, idempotency records), the provider's own record of every
 * request (or the SMTP sink's of every delivery), and the dispatchers' logs (breaker transitions).
 *
 * <p>Every committed order must end with its confirmation
 * <ul>
 *   <li><b>sent</b>: the message is {@code done} and the provider holds exactly one effect for its key
 *       (HTTP: after the provider's own key deduplication; SMTP: one delivery of its Message-ID);</li>
 *   <li><b>failed</b> with a reason, or <b>in review</b> (at most one effect either way).</li>
 * </ul>
 * Anything else is <b>lost</b> (no outbox row, still pending after the drain, done without an effect,
 * running past its lease) or <b>duplicated</b> (two effects for one key). With the SMTP transport in
 * review mode every message whose send had an unknown outcome must be in review. No dispatcher may
 * claim while its breaker is open, and every dispatcher alive through the provider outage must have
 * opened its breaker.
 */
final class ChaosCheck {

    /**
     * A claim that started this soon after the breaker opened may have passed the gate just before:
     * the gate is asked, then a pooled connection is taken and the claim statement sent, and on a
     * busy two-core machine that can take a while.
     */
    static final long BREAKER_GRACE_MILLIS = 1000;

    private static final Pattern TRANSITION = Pattern.compile(
            "^(\\S+) +\\S+ +\\[[^]]*] \\S+ - Circuit breaker of transport \\S+: State transition from (\\w+) to (\\w+)");

    private final ChaosOptions o;
    private final DSLContext dsl;
    private final OrderWriter writer;
    private final DispatcherFleet fleet;
    private final BreakerWatch watch;
    private final List<ChaosRun.Fault> faults;
    private final Path dir;
    private final long loadStart;
    private final long loadEnd;
    private final long outageStart;
    private final long outageEnd;

    ChaosCheck(ChaosOptions o, DSLContext dsl, OrderWriter writer, DispatcherFleet fleet, BreakerWatch watch,
               List<ChaosRun.Fault> faults, Path dir, long loadStart, long loadEnd, long outageStart, long outageEnd) {
        this.o = o;
        this.dsl = dsl;
        this.writer = writer;
        this.fleet = fleet;
        this.watch = watch;
        this.faults = faults;
        this.dir = dir;
        this.loadStart = loadStart;
        this.loadEnd = loadEnd;
        this.outageStart = outageStart;
        this.outageEnd = outageEnd;
    }

    /** What the provider side holds for one idempotency key. */
    private static final class Effects {
        int requests;
        int effects;
        long firstEffectAt;
        String firstProviderId;
        final Map<String, Integer> kinds = new TreeMap<>();
        final List<Records.ProviderLine> lines = new ArrayList<>();
    }

    ChaosReport run(long drainedMillis) {
        boolean http = o.transport() == ChaosOptions.Transport.HTTP;
        ChaosReport r = new ChaosReport("Chaos run: " + o.transport() + " transport"
                + (http ? "" : " (review mode)") + ", seed " + o.seed());
        r.row("load", o.load().toSeconds() + " s at " + o.ordersPerSecond() + " orders/s, " + o.dispatchers()
                + " dispatcher processes, lease " + o.lease().toSeconds() + " s");

        // ---- the provider's side, per idempotency key
        Map<String, Effects> byKey = new HashMap<>();
        Map<String, Integer> providerKinds = new TreeMap<>();
        if (http) {
            for (Records.ProviderLine l : Records.provider(dir.resolve("provider.rec"))) {
                providerKinds.merge(l.kind(), 1, Integer::sum);
                if (l.key() == null) {
                    continue;
                }
                Effects e = byKey.computeIfAbsent(l.key(), k -> new Effects());
                e.kinds.merge(l.kind(), 1, Integer::sum);
                e.lines.add(l);
                if (!l.kind().equals("outage-start")) {
                    e.requests++;
                }
                if (l.isEffect() && e.effects++ == 0) {
                    e.firstEffectAt = l.at();
                    e.firstProviderId = l.providerId();
                }
            }
        }
        Map<String, Effects> byMessageId = new HashMap<>();
        if (!http) {
            for (Records.SinkLine l : Records.sink(dir.resolve("sink.rec"))) {
                providerKinds.merge(l.kind(), 1, Integer::sum);
                if (l.messageId() == null) {
                    continue;
                }
                Effects e = byMessageId.computeIfAbsent(l.messageId(), k -> new Effects());
                e.requests++;
                e.kinds.merge(l.kind(), 1, Integer::sum);
                if (l.isDelivery() && e.effects++ == 0) {
                    e.firstEffectAt = l.at();
                }
            }
        }

        // ---- the database's side, per order
        List<Record> orders = dsl.fetch("""
                SELECT o.id, o.customer_email, coalesce(m.status, e.status) AS status, e.idempotency_key, e.last_error,
                       (m.status = 'running' AND m.lease_until < now()) AS lease_expired,
                       r.state AS idem_state, r.reservations, r.result_ref,
                       (extract(epoch FROM r.first_reserved_at) * 1000)::bigint AS first_reserved_ms
                FROM orders o
                LEFT JOIN mailroom.outbox_effect e ON e.idempotency_key = 'email-order-' || o.id
                LEFT JOIN mailroom.outbox_message m ON m.id = e.message_id AND m.created_at = e.message_created_at
                LEFT JOIN mailroom.idempotency_record r ON r.effect_key = 'email-order-' || o.id
                ORDER BY o.id""");
        Map<String, Boolean> ambiguousKeys = new HashMap<>();
        for (Record a : dsl.fetch("SELECT DISTINCT idempotency_key FROM mailroom.outbox_attempt WHERE detail->>'ambiguous' = 'true'")) {
            ambiguousKeys.put(a.get(0, String.class), true);
        }
        int ambiguousAttempts = dsl.fetchSingle("SELECT count(*) FROM mailroom.outbox_attempt WHERE detail->>'ambiguous' = 'true'")
                .get(0, Integer.class);

        int sent = 0, failed = 0, review = 0, lost = 0, duplicated = 0, stuck = 0, unfinished = 0;
        int failedButDelivered = 0, reviewDelivered = 0, idMismatch = 0, resentKeys = 0;
        // a primary failover: from the start of the restart command (the replication stream cut, in the
        // asynchronous scenario) to the promoted replica; what the old primary committed after the cut is
        // the lost tail
        ChaosRun.Fault failover = faults.stream().filter(f -> f.kind().equals("postgres-restart")).findFirst().orElse(null);
        int sentAgainAfterTail = 0;
        // keys another order's email had used (a rewound sequence): their effect at the provider is the lost order's
        Set<String> reusedKeys = new HashSet<>();
        if (failover != null) {
            byKey.forEach((k, e) -> {
                if (e.lines.stream().anyMatch(l -> l.kind().equals("key-mismatch") && l.at() > failover.at())) {
                    reusedKeys.add(k);
                }
            });
        }
        int sentAgainAfterTailDeduplicated = 0;
        List<Long> delays = new ArrayList<>();
        Set<String> orderKeys = new HashSet<>();
        Map<Long, Long> committedAt = writer.committedAtMillis();
        for (Record row : orders) {
            long orderId = row.get("id", Long.class);
            String key = OrderService.idempotencyKey(orderId);
            orderKeys.add(key);
            String status = row.get("status", String.class);
            Effects fx = http ? byKey.get(key) : byMessageId.get(MessageIds.forKey(key, "example.com"));
            int effects = fx == null ? 0 : fx.effects;
            Integer reservations = row.get("reservations", Integer.class);
            if (reservations != null && reservations > 1) {
                resentKeys++;
            }
            Long firstReserved = row.get("first_reserved_ms", Long.class);
            if (http && failover != null && fx != null && fx.effects > 0 && fx.firstEffectAt < failover.until()
                    && firstReserved != null && firstReserved > failover.at()) {
                // accepted before the new primary took over, yet the surviving database first reserved the
                // key after the stream was cut: the reservation and outcome of that send went with the
                // tail, and the message was claimed and sent again as if never sent
                long after = Math.max(fx.firstEffectAt, failover.at());
                List<Records.ProviderLine> again = fx.lines.stream().filter(l -> l.at() > after && !l.kind().equals("outage-start")).toList();
                // a key-mismatch is another order under a reused id (counted apart), not this email again
                if (!again.isEmpty() && again.stream().noneMatch(l -> l.kind().equals("key-mismatch"))) {
                    sentAgainAfterTail++;
                    if (again.stream().anyMatch(l -> l.kind().startsWith("replayed"))) {
                        sentAgainAfterTailDeduplicated++;
                    }
                }
            }
            if (effects > 1) {
                duplicated++;
                r.violation("duplicated: " + key + " has " + effects + " effects at the provider " + fx.kinds);
            }
            if (status == null) {
                lost++;
                r.violation("lost: order " + orderId + " has no outbox message");
                continue;
            }
            switch (status) {
                case "done" -> {
                    if (effects == 0) {
                        lost++;
                        r.violation("lost: " + key + " is done but the provider has no effect for it");
                    } else {
                        sent++;
                        Long commit = committedAt.get(orderId);
                        if (commit != null) {
                            delays.add(fx.firstEffectAt - commit);
                        }
                        // the provider id recorded with the completion must be the one the provider gave
                        String ref = row.get("result_ref", String.class);
                        if (http && !fx.firstProviderId.equals(ref)) {
                            idMismatch++;
                            r.violation("mismatch: " + key + " recorded provider id " + ref + ", the provider gave "
                                    + fx.firstProviderId);
                        }
                    }
                }
                case "failed" -> {
                    failed++;
                    if (row.get("last_error", String.class) == null) {
                        r.violation("failed without a reason: " + key);
                    }
                    if (effects > 0 && !reusedKeys.contains(key)) {
                        failedButDelivered++;
                    }
                }
                case "review" -> {
                    review++;
                    if (effects > 0) {
                        reviewDelivered++;
                    }
                }
                case "running" -> {
                    if (Boolean.TRUE.equals(row.get("lease_expired", Boolean.class))) {
                        stuck++;
                        r.violation("stuck: " + key + " is running past its lease");
                    } else {
                        unfinished++;
                        r.violation("unfinished: " + key + " is still running after the drain");
                    }
                }
                default -> {
                    unfinished++;
                    r.violation("unfinished: " + key + " is still " + status + " after the drain");
                }
            }
            if (!http && ambiguousKeys.containsKey(key) && !status.equals("review")) {
                r.violation("ambiguous but not in review: " + key + " is " + status);
            }
            if (!http && fx != null && fx.kinds.containsKey("delivered-dropped") && !status.equals("review")) {
                r.violation("delivered without an answer but not in review: " + key + " is " + status);
            }
        }
        if (http) {
            for (String k : byKey.keySet()) {
                if (byKey.get(k).effects > 0 && !orderKeys.contains(k)) {
                    r.violation("phantom: the provider has an effect for " + k + ", which belongs to no committed order");
                }
            }
        }

        r.count("messages", orders.size());
        r.row("orders not committed (writer errors)", writer.failures().isEmpty() ? "0" : writer.failures().toString());
        r.count("sent", sent);
        r.count("failed", failed);
        r.count("in review", review);
        r.count("lost", lost + unfinished);
        r.count("duplicated", duplicated);
        r.count("stuck in running past the lease", stuck);
        if (failedButDelivered > 0) {
            r.note(failedButDelivered + " failed messages were delivered nevertheless (their last attempt had an unknown outcome)");
        }
        r.row("in review although delivered", reviewDelivered + " (the send that parked them did reach the provider)");
        if (http) {
            r.count("provider id mismatches", idMismatch);
        }

        // ---- faults
        Map<String, Integer> faultKinds = new TreeMap<>();
        int terminated = 0;
        for (ChaosRun.Fault f : faults) {
            faultKinds.merge(f.kind(), 1, Integer::sum);
            if (f.kind().equals("pg_terminate_backend")) {
                terminated += Integer.parseInt(f.detail().substring(0, f.detail().indexOf(' ')));
            }
        }
        r.count("faults: kill -9 of a dispatcher", faultKinds.getOrDefault("kill-9", 0));
        r.row("faults: pg_terminate_backend rounds (sessions)", faultKinds.getOrDefault("pg_terminate_backend", 0)
                + " (" + terminated + ")");
        r.count("faults: PostgreSQL restarts", faultKinds.getOrDefault("postgres-restart", 0));
        if (http) {
            r.count("faults: provider 500", providerKinds.getOrDefault("fault-500", 0));
            r.count("faults: provider 429 + Retry-After", providerKinds.getOrDefault("fault-429", 0));
            r.count("faults: provider accepted, never answered in time", providerKinds.getOrDefault("accepted-hung", 0)
                    + providerKinds.getOrDefault("replayed-hung", 0));
            r.row("faults: provider outage (503 answers)", o.outage().toSeconds() + " s ("
                    + providerKinds.getOrDefault("outage-503", 0) + ")");
        } else {
            r.count("faults: SMTP sink kill -9, restarted at once", faultKinds.getOrDefault("smtp-sink-kill-9", 0));
            r.row("faults: SMTP sink outage (killed, restarted later)", faultKinds.getOrDefault("smtp-sink-outage", 0)
                    + " × " + o.outage().toSeconds() + " s");
            r.count("faults: SMTP session dropped before DATA", providerKinds.getOrDefault("dropped-before-data", 0));
            r.count("faults: SMTP 451 after DATA", providerKinds.getOrDefault("deferred-451", 0));
            r.count("faults: SMTP delivered, connection dropped before the reply", providerKinds.getOrDefault("delivered-dropped", 0));
        }

        // ---- raw requests per key
        Map<Integer, Integer> histogram = new TreeMap<>();
        int raw = 0;
        int max = 0;
        for (Effects e : (http ? byKey : byMessageId).values()) {
            histogram.merge(Math.min(e.requests, 4), 1, Integer::sum);
            raw += e.requests;
            max = Math.max(max, e.requests);
        }
        StringBuilder h = new StringBuilder();
        histogram.forEach((n, keys) -> h.append(h.isEmpty() ? "" : ", ").append(n == 4 ? "4+" : n).append(": ").append(keys));
        r.row(http ? "raw provider requests (keys by requests)" : "raw SMTP messages (Message-IDs by messages)",
                raw + " (" + h + "; max " + max + ")");
        r.count("ambiguous sends", ambiguousAttempts);
        if (http) {
            int replays = providerKinds.getOrDefault("replayed", 0) + providerKinds.getOrDefault("replayed-hung", 0);
            long replayedKeys = byKey.values().stream().filter(e -> e.kinds.containsKey("replayed") || e.kinds.containsKey("replayed-hung")).count();
            r.row("repeats the provider deduplicated by key (keys)", replays + " (" + replayedKeys + ")");
        }
        r.row("effects reserved more than once (retries after a failure or an unknown outcome)", resentKeys);
        if (failover != null) {
            // by id and customer, not id alone: after a rewound sequence a lost order's id belongs to a new order
            Set<String> survived = new HashSet<>();
            orders.forEach(o -> survived.add(o.get("id", Long.class) + " " + o.get("customer_email", String.class)));
            List<OrderWriter.Acknowledged> acks = writer.acknowledged();
            long acknowledgedLost = acks.stream().filter(a -> !survived.contains(a.orderId() + " " + a.customerEmail())).count();
            Map<Long, Long> timesGiven = new HashMap<>();
            acks.forEach(a -> timesGiven.merge(a.orderId(), 1L, Long::sum));
            long reusedIds = timesGiven.values().stream().filter(n -> n > 1).count();
            r.row("acknowledged orders missing after the failover (committed on the old primary, never on the new one)",
                    acknowledgedLost);
            r.row("order ids acknowledged twice, for two customers (the sequence rewound with the tail)", reusedIds);
            if (http) {
                long refusedReusedKeys = reusedKeys.size();
                r.row("emails of new orders refused by the provider: their key (email-order-<id>) had been used by a lost"
                        + " order's email with another body (422), so they ended failed", refusedReusedKeys);
                r.row("surviving emails sent again because their send's records were lost with the tail (accepted before"
                        + " the promotion, first reserved on the new primary, requested again after the cut; of them"
                        + " answered by the provider from its key)", sentAgainAfterTail + " (" + sentAgainAfterTailDeduplicated + ")");
            }
        }

        // ---- breaker
        checkBreaker(r);

        // ---- delay
        delays.sort(Long::compare);
        if (!delays.isEmpty()) {
            r.row("delivery delay commit → provider accept", "p50 " + pct(delays, 50) + " ms, p99 " + pct(delays, 99)
                    + " ms, max " + delays.getLast() + " ms");
        }
        r.row("drain after the load", drainedMillis < 0 ? "timed out after " + o.drain().toSeconds() + " s"
                : drainedMillis / 1000 + " s");
        if (drainedMillis < 0) {
            r.violation("the queue did not drain within " + o.drain().toSeconds() + " s");
        }
        return r;
    }

    // ------------------------------------------------------------------------------------ breaker

    /** An interval during which one dispatcher's breaker was OPEN, from its log. */
    record OpenInterval(String worker, long from, long to) {
    }

    private void checkBreaker(ChaosReport r) {
        List<OpenInterval> open = new ArrayList<>();
        Map<String, List<Long>> transitions = new HashMap<>();
        int opened = 0;
        for (DispatcherFleet.Incarnation inc : fleet.incarnations()) {
            long openedAt = -1;
            for (String line : lines(inc.jvm.log())) {
                Matcher m = TRANSITION.matcher(line);
                if (!m.find()) {
                    continue;
                }
                long at = OffsetDateTime.parse(m.group(1)).toInstant().toEpochMilli();
                transitions.computeIfAbsent(inc.workerId, k -> new ArrayList<>()).add(at);
                if (m.group(3).equals("OPEN")) {
                    openedAt = at;
                    opened++;
                } else if (m.group(2).equals("OPEN") && openedAt >= 0) {
                    open.add(new OpenInterval(inc.workerId, openedAt, at));
                    openedAt = -1;
                }
            }
            if (openedAt >= 0) {
                open.add(new OpenInterval(inc.workerId, openedAt, Math.min(inc.endedAtMillis, System.currentTimeMillis())));
            }
        }
        r.row("breaker transitions to OPEN (all dispatchers)", opened);

        if (outageStart > 0) {
            List<String> closedThrough = new ArrayList<>();
            List<String> openedIn = new ArrayList<>();
            for (DispatcherFleet.Incarnation inc : fleet.incarnations()) {
                boolean openedDuring = open.stream().anyMatch(i -> i.worker().equals(inc.workerId)
                        && i.from() >= outageStart && i.from() <= outageEnd);
                boolean aliveThrough = inc.startedAtMillis < outageStart && inc.endedAtMillis > outageEnd;
                if (openedDuring) {
                    openedIn.add(inc.workerId);
                } else if (aliveThrough) {
                    closedThrough.add(inc.workerId);
                }
            }
            Set<String> seenOpenInOutage = new java.util.TreeSet<>();
            watch.seenOpen().forEach((w, at) -> seenOpenInOutage.add(w));
            r.row("breaker opened during the outage", (openedIn.isEmpty() ? "no" : "yes: " + openedIn)
                    + "; /health/ready showed OPEN for " + seenOpenInOutage);
            if (openedIn.isEmpty()) {
                r.violation("no dispatcher opened its breaker during the " + o.outage().toSeconds() + " s outage");
            }
            for (String w : closedThrough) {
                r.violation("dispatcher " + w + " was alive through the whole outage and never opened its breaker");
            }
            if (watch.seenOpen().isEmpty()) {
                r.violation("no /health/ready poll saw a breaker OPEN during the outage");
            }
        }

        // No claim by a dispatcher while its own breaker was open (after the grace period).
        int claimsWhileOpen = 0;
        int attemptsCountedWhileOpen = 0;
        for (Record a : dsl.fetch("SELECT worker, started_at, outcome, idempotency_key FROM mailroom.outbox_attempt")) {
            String worker = a.get("worker", String.class);
            long at = a.get("started_at", OffsetDateTime.class).toInstant().toEpochMilli();
            for (OpenInterval i : open) {
                if (i.worker().equals(worker) && at > i.from() + BREAKER_GRACE_MILLIS && at < i.to()) {
                    claimsWhileOpen++;
                    String outcome = a.get("outcome", String.class);
                    if (!outcome.equals("released")) {
                        attemptsCountedWhileOpen++;
                    }
                    r.violation("claim while the breaker was open: " + a.get("idempotency_key", String.class) + " by "
                            + worker + " at " + Instant.ofEpochMilli(at) + " (open " + Instant.ofEpochMilli(i.from())
                            + " .. " + Instant.ofEpochMilli(i.to()) + "), outcome " + outcome);
                }
            }
        }
        r.count("claims while the claimer's breaker was open", claimsWhileOpen);
        r.row("attempts counted while the claimer's breaker was open", attemptsCountedWhileOpen);

        // Stretches in which every live dispatcher reported OPEN: attempts snapshot at open and at
        // close, "close" being the last comparison before any breaker changed state (a half-open
        // breaker lets probes claim, legitimately).
        List<Long> allTransitions = transitions.values().stream().flatMap(List::stream).sorted().toList();
        int judged = 0;
        int skipped = 0;
        int grownTotal = 0;
        long judgedMillis = 0;
        for (BreakerWatch.Stretch s : watch.stretches()) {
            long firstChange = allTransitions.stream().filter(t -> t > s.startMillis).findFirst().orElse(Long.MAX_VALUE);
            long[] last = null;
            for (long[] c : s.checks) {
                if (c[0] < firstChange) {
                    last = c;
                }
            }
            if (last == null) {
                skipped++; // a breaker changed state before the first comparison
                continue;
            }
            judged++;
            judgedMillis += last[0] - s.startMillis;
            grownTotal += (int) last[1];
            if (last[1] > 0) {
                r.violation("attempts grew while every breaker was open (" + Instant.ofEpochMilli(s.startMillis) + " .. "
                        + Instant.ofEpochMilli(last[0]) + "): " + s.grownKeys);
            }
        }
        r.row("attempts snapshot while every breaker was open: stretches judged (too short), time judged, messages whose attempts grew",
                judged + " (" + skipped + "), " + judgedMillis / 1000.0 + " s, " + grownTotal);
    }

    private static List<String> lines(Path file) {
        try {
            return Files.exists(file) ? Files.readAllLines(file) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static long pct(List<Long> sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }
}
