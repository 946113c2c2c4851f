package io.mailroom.support;

import io.mailroom.db.sql.SqlClock;
import io.mailroom.delivery.DeliveryEventRollup;
import io.mailroom.outbox.admin.TopicRollup;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The charts by topic: outbox-core's {@link TopicRollup} (attempts by outcome, emails waiting) and
 * delivery-events' {@link DeliveryEventRollup} (bounces), composed per topic and bucket in one
 * consistent read. It reads rollup rows only, never the attempts, events or hot queue, so a console
 * refreshing every few seconds costs the same at ten emails as at ten million; bounces of no known
 * email (orphans, topic {@code none}) are left out.
 */
final class TopicCharts {

    private static final String NO_TOPIC = "none";

    private final SupportTx db;

    TopicCharts(SupportTx db) {
        this.db = db;
    }

    TopicStats read(ChartRange range) {
        return db.read(tx -> {
            Instant now = tx.select(SqlClock.database().now()).fetchSingle().value1();
            Instant to = range.end(now);
            Instant from = to.minus(range.step().multipliedBy(range.buckets()));
            Map<String, Series> byTopic = new TreeMap<>();
            for (TopicRollup.Bucket b : TopicRollup.read(tx, range.resolution(), from, to, range.step())) {
                Series s = byTopic.computeIfAbsent(b.topic(), t -> new Series(range.buckets()));
                int i = index(range, from, b.start());
                s.sent[i] += b.sent();
                s.failed[i] += b.retried() + b.failed() + b.review();
                s.failedForGood[i] += b.failed();
                if (b.waiting() != null) {
                    s.waiting[i] = Math.max(s.waiting[i] == null ? 0 : s.waiting[i], b.waiting());
                }
            }
            for (DeliveryEventRollup.Bucket b : DeliveryEventRollup.read(tx, range.resolution(), from, to, range.step())) {
                if (!b.kind().equals("bounced") || b.topic().equals(NO_TOPIC)) {
                    continue;
                }
                byTopic.computeIfAbsent(b.topic(), t -> new Series(range.buckets())).bounced[index(range, from, b.start())] += b.events();
            }
            TopicRollup.Mark mark = TopicRollup.mark(tx);
            List<TopicStats.Topic> topics = new ArrayList<>();
            byTopic.forEach((topic, s) -> {
                if (s.anything()) {
                    topics.add(s.topic(topic, from, range));
                }
            });
            return new TopicStats(range, from, to, range.step().toSeconds(), mark == null ? null : mark.foldedUntil(),
                    mark == null ? null : mark.sampledAt(), topics);
        });
    }

    private static int index(ChartRange range, Instant from, Instant start) {
        long i = (start.getEpochSecond() - from.getEpochSecond()) / range.step().toSeconds();
        if (i < 0 || i >= range.buckets()) {
            throw new IllegalStateException("bucket " + start + " outside the range from " + from);
        }
        return (int) i;
    }

    /** One topic's series while it is being read. */
    private static final class Series {
        final long[] sent;
        final long[] failed;
        final long[] failedForGood;
        final long[] bounced;
        final Long[] waiting;

        Series(int n) {
            sent = new long[n];
            failed = new long[n];
            failedForGood = new long[n];
            bounced = new long[n];
            waiting = new Long[n];
        }

        /** Anything to draw: a count, or emails waiting. */
        boolean anything() {
            for (int i = 0; i < sent.length; i++) {
                if (sent[i] + failed[i] + bounced[i] > 0 || (waiting[i] != null && waiting[i] > 0)) {
                    return true;
                }
            }
            return false;
        }

        TopicStats.Topic topic(String name, Instant from, ChartRange range) {
            List<TopicStats.Bucket> buckets = new ArrayList<>(sent.length);
            long s = 0;
            long f = 0;
            long b = 0;
            Long last = null;
            for (int i = 0; i < sent.length; i++) {
                buckets.add(new TopicStats.Bucket(from.plus(range.step().multipliedBy(i)), sent[i], failed[i], failedForGood[i],
                        bounced[i], waiting[i]));
                s += sent[i];
                f += failed[i];
                b += bounced[i];
                last = waiting[i] == null ? last : waiting[i];
            }
            return new TopicStats.Topic(name, s, f, b, last, buckets);
        }
    }
}
