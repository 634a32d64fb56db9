package io.sluice.backend.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.sluice.backend.engine.ArrivalSkew;
import io.sluice.backend.engine.PartitionTotals;
import io.sluice.common.Clock;
import io.sluice.partition.DeadLetterReason;
import io.sluice.partition.QueueCounts;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The queue metrics, read at scrape time from the partitions this process is the primary of: depth by state, age
 * of the oldest message, and the partitions' stored totals (sends, receives, deletes, expiries, dead-letter
 * hand-offs by reason). Each partition is exported by exactly one process, its shard's leader, so summing over the
 * cluster never double counts; a fail-over moves the series to the new primary with the same (replicated) values.
 * Sum by {@code queue} for queue figures; take the max of the age.
 */
public final class QueueMetrics implements MultiCollector {
    /** One partition as exported. */
    public record Row(String queue, int partition, String shard, QueueCounts counts, PartitionTotals totals,
                      ArrivalSkew.Snapshot arrivalSkew) {
        public Row(String queue, int partition, String shard, QueueCounts counts, PartitionTotals totals) {
            this(queue, partition, shard, counts, totals, null);
        }
    }

    private final Supplier<List<Row>> rows;
    private final Clock clock;

    public QueueMetrics(Supplier<List<Row>> rows, Clock clock) {
        this.rows = rows;
        this.clock = clock;
    }

    @Override
    public MetricSnapshots collect() {
        List<Row> all = rows.get();
        long now = clock.nowMillis();
        GaugeSnapshot.Builder depth = GaugeSnapshot.builder().name("sluice_queue_messages")
                .help("Messages stored in the partition by state: visible, inflight (received, not deleted), delayed");
        GaugeSnapshot.Builder age = GaugeSnapshot.builder().name("sluice_queue_oldest_message_age_seconds")
                .help("Age of the partition's oldest message (any state) in seconds; 0 when empty");
        CounterSnapshot.Builder deadLettered = CounterSnapshot.builder().name("sluice_queue_dead_lettered")
                .help("Messages handed off to the dead-letter queue, by reason");
        GaugeSnapshot.Builder pending = GaugeSnapshot.builder().name("sluice_queue_dead_letter_pending")
                .help("Dead-letter hand-offs made, not yet copied to the dead-letter queue");
        GaugeSnapshot.Builder pendingAge = GaugeSnapshot.builder().name("sluice_queue_dead_letter_pending_age_seconds")
                .help("Age of the partition's oldest pending dead-letter hand-off in seconds; 0 when none");
        HistogramSnapshot.Builder skew = HistogramSnapshot.builder().name("sluice_queue_arrival_skew_seconds")
                .help("FIFO: arrival time minus Sluice.ProducerTime of producer-timed messages (a clock ahead counts as"
                        + " 0), since this primary opened the partition: size SluiceReorderWindowMillis from its p99");
        for (Row r : all) {
            Labels labels = labels(r);
            if (r.arrivalSkew() != null) {
                ArrivalSkew.Snapshot s = r.arrivalSkew();
                double[] bounds = Arrays.copyOf(s.boundsSeconds(), s.boundsSeconds().length + 1);
                bounds[bounds.length - 1] = Double.POSITIVE_INFINITY;
                skew.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder().labels(labels)
                        .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, s.counts()))
                        .sum(s.sumSeconds()).build());
            }
            depth.dataPoint(gauge(labels.add("state", "visible"), r.counts().visible()));
            depth.dataPoint(gauge(labels.add("state", "inflight"), r.counts().inflight()));
            depth.dataPoint(gauge(labels.add("state", "delayed"), r.counts().delayed()));
            long oldest = r.counts().oldestRetentionBaseMillis();
            age.dataPoint(gauge(labels, oldest < 0 ? 0 : Math.max(0, now - oldest) / 1000.0));
            pending.dataPoint(gauge(labels, r.counts().deadLetterPending()));
            long handOff = r.counts().oldestHandOffMillis();
            pendingAge.dataPoint(gauge(labels, handOff < 0 ? 0 : Math.max(0, now - handOff) / 1000.0));
            for (DeadLetterReason reason : DeadLetterReason.values()) {
                deadLettered.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(labels.add("reason", reason.name().toLowerCase(Locale.ROOT)))
                        .value(r.totals().deadLettered(reason)).build());
            }
        }
        return MetricSnapshots.builder().metricSnapshot(depth.build()).metricSnapshot(age.build())
                .metricSnapshot(pending.build()).metricSnapshot(pendingAge.build())
                .metricSnapshot(counter(all, "sluice_queue_messages_sent", "Messages stored by sends (duplicates"
                        + " a FIFO queue dropped are not counted)", PartitionTotals::sent))
                .metricSnapshot(counter(all, "sluice_queue_messages_received", "Deliveries by receives",
                        PartitionTotals::received))
                .metricSnapshot(counter(all, "sluice_queue_messages_deleted", "Messages deleted by consumers",
                        PartitionTotals::deleted))
                .metricSnapshot(counter(all, "sluice_queue_messages_expired", "Messages dropped at the end of"
                        + " their retention period", PartitionTotals::expired))
                .metricSnapshot(counter(all, "sluice_queue_messages_purged", "Messages removed by PurgeQueue",
                        PartitionTotals::purged))
                .metricSnapshot(counter(all, "sluice_queue_messages_late", "FIFO reorder window: stragglers"
                        + " delivered after a message later in producer order (flagged Sluice.Late)", PartitionTotals::late))
                .metricSnapshot(deadLettered.build())
                .metricSnapshot(skew.build())
                .build();
    }

    private static Labels labels(Row r) {
        return Labels.of("queue", r.queue(), "partition", Integer.toString(r.partition()), "shard", r.shard());
    }

    private static GaugeSnapshot.GaugeDataPointSnapshot gauge(Labels labels, double value) {
        return GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels).value(value).build();
    }

    private static CounterSnapshot counter(List<Row> rows, String name, String help,
                                           ToLongFunction<PartitionTotals> value) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
        for (Row r : rows) {
            b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels(r))
                    .value(value.applyAsLong(r.totals())).build());
        }
        return b.build();
    }
}
