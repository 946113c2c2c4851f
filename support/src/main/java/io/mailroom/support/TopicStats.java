package io.mailroom.support;

import java.time.Instant;
import java.util.List;

/**
 * Emails by topic over a range ({@code GET /api/stats/topics?range=1h|24h|7d}), read from the
 * rollups only: the counts the dispatchers' rollup folded (minutes that closed half a minute ago and
 * earlier), the bounces as they were stored, the emails waiting as sampled once a minute.
 *
 * @param range        the range asked for
 * @param from         start of the first bucket
 * @param to           end of the last bucket (the one that holds the time of reading)
 * @param stepSeconds  length of one bucket
 * @param countedUntil every attempt that finished before this is counted; null when the rollup never ran
 *                     (no dispatcher has run since the upgrade)
 * @param sampledAt    when the emails waiting were last sampled, or null
 * @param topics       topics with anything to show in the range, alphabetically
 */
public record TopicStats(ChartRange range, Instant from, Instant to, long stepSeconds, Instant countedUntil,
                         Instant sampledAt, List<Topic> topics) {

    public TopicStats {
        topics = List.copyOf(topics);
    }

    /**
     * One topic: totals over the range and every bucket of it, oldest first.
     *
     * @param waiting emails waiting at the last sample in the range, or null when none was taken
     */
    public record Topic(String topic, long sent, long failed, long bounced, Long waiting, List<Bucket> buckets) {
        public Topic {
            buckets = List.copyOf(buckets);
        }
    }

    /**
     * One bucket.
     *
     * @param sent          attempts the provider accepted
     * @param failed        attempts that failed: will be retried, failed for good, or parked for review
     *                      (the same as the queue chart's failed tries)
     * @param failedForGood of those, attempts that failed for good
     * @param bounced       bounces reported (hard and soft) for emails of the topic
     * @param waiting       the most emails seen waiting in the bucket, null when no sample was taken in it
     */
    public record Bucket(Instant start, long sent, long failed, long failedForGood, long bounced, Long waiting) {
    }
}
