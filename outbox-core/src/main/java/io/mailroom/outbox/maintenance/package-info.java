/**
 * Keeps the outbox's tables small while nothing a person may still need is lost:
 * {@link io.mailroom.outbox.maintenance.PartitionMaintainer} (daily partitions created ahead, old
 * days dropped past the hot retention; a row pending, running or in review is never dropped),
 * {@link io.mailroom.outbox.maintenance.HistoryCleaner} and their
 * {@link io.mailroom.outbox.maintenance.RetentionConfig}; and the
 * {@link io.mailroom.outbox.maintenance.StatsRollup}, which folds the attempts into the counts behind
 * the charts by topic ({@link io.mailroom.outbox.maintenance.RollupConfig}).
 */
package io.mailroom.outbox.maintenance;
