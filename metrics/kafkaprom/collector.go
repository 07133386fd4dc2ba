// Package kafkaprom exports the routing of github.com/rackfetch/kafka-go
// Readers (Reader.RoutingStats) and the counters of Writers (Writer.Totals)
// as Prometheus metrics. It is a module of its
// own, so the library itself never depends on client_golang; its name
// leaves "prometheus" to client_golang, so neither import needs an alias.
//
//	c, err := kafkaprom.NewCollector(kafkaprom.WithReaders(reader), kafkaprom.WithWriters(writer))
//
// Metrics (namespace "kafka", WithNamespace), each labelled client_id and
// group_id (the Readers' Dialer.ClientID and GroupID):
//
//	kafka_reader_fetched_bytes_total{broker,rack}   fetch response bytes read from each broker (rack: its broker.rack)
//	kafka_reader_same_rack_bytes_total              bytes read from brokers in the Reader's rack
//	kafka_reader_cross_rack_bytes_total             bytes read from the others (every byte without a Rack)
//	kafka_reader_reroutes_total{reason}             moves of a partition's reads, by kafka.RerouteReason ID (preferred_replica, …)
//	kafka_reader_rack_inactive{cause}               1 for each reason found why rack-aware fetching does nothing, by kafka.RackInactiveCause ID (no_broker_in_rack, …)
//	kafka_reader_partition_replica_info{topic,partition,broker,rack}  1: the broker a partition is read from now
//	kafka_reader_partition_leader_info{topic,partition,broker}        1: the partition's leader as last seen
//	kafka_reader_partition_lag{topic,partition}     messages behind the leader's high watermark
//
// With WithPartitionLabels(false) the three partition series give way to
// kafka_reader_topic_lag{topic}, the lag summed over the topic's
// partitions. The partition series cover the partitions being read now.
// Readers with the same client and group IDs are summed into one series set
// (kafka.ReaderSet; for example one Reader per partition).
//
// Writer metrics, each labelled client_id and topic (the client ID of the
// Writers' Transport and their Topic; Writers sharing both are summed,
// kafka.WriterSet). They come from Writer.Totals, which resets nothing, so
// the application's own calls to Writer.Stats keep their counts:
//
//	kafka_writer_writes_total            produce requests sent
//	kafka_writer_batches_total           record batches sent (one per partition and request)
//	kafka_writer_messages_total          messages sent
//	kafka_writer_bytes_total             bytes of the messages sent
//	kafka_writer_errors_total            failed attempts
//	kafka_writer_retries_total           attempts made again after a failure
//	kafka_writer_write_seconds_total     time spent in produce requests
//	kafka_writer_throttle_seconds_total  throttle time brokers asked for
//	kafka_writer_produced_bytes_total{rack}  encoded record batch bytes written to leaders, by the leader's rack (rack: its broker.rack)
//	kafka_writer_same_rack_bytes_total   of those, to leaders in the Writer's Rack
//	kafka_writer_other_rack_bytes_total  to the others (both 0 without a Rack)
package kafkaprom

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/rackfetch/kafka-go"
)

// Collector is a prometheus.Collector over the routing counters of one or
// more Readers and the counters of Writers. Its methods are safe for
// concurrent use.
type Collector struct {
	readers    *kafka.ReaderSet
	writers    *kafka.WriterSet
	partitions bool
	writerDescs

	fetched, sameRack, crossRack, reroutes, rackInactive *prometheus.Desc
	replica, leader, lag, topicLag                       *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector, registered on the registerer of
// WithRegisterer (prometheus.DefaultRegisterer unless set). Add and Remove
// change its Readers later (a Reader closed and replaced), AddWriter and
// RemoveWriter its Writers.
func NewCollector(opts ...Option) (*Collector, error) {
	cfg := newConfig(opts)
	reader := []string{"client_id", "group_id"}
	with := func(labels ...string) []string { return append(append([]string{}, reader...), labels...) }
	desc := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(cfg.namespace, "reader", name), help, labels, nil)
	}
	c := &Collector{
		readers:     kafka.NewReaderSet(cfg.readers...),
		writers:     kafka.NewWriterSet(cfg.writers...),
		partitions:  cfg.partitions,
		writerDescs: newWriterDescs(cfg.namespace),
		fetched: desc("fetched_bytes_total",
			"Fetch response bytes read from each broker, labelled with the broker's rack.", with("broker", "rack")),
		sameRack: desc("same_rack_bytes_total",
			"Fetch response bytes read from brokers in the reader's rack.", reader),
		crossRack: desc("cross_rack_bytes_total",
			"Fetch response bytes read from brokers outside the reader's rack (all of them when it has no rack).", reader),
		reroutes: desc("reroutes_total",
			"Moves of a partition's reads from one broker to another, by reason.", with("reason")),
		rackInactive: desc("rack_inactive",
			"1 for each reason found why rack-aware fetching does nothing (no_replica_selector, no_broker_in_rack, fetch_too_old).", with("cause")),
		replica: desc("partition_replica_info",
			"1 for the broker the partition is read from now, labelled with its id and rack.", with("topic", "partition", "broker", "rack")),
		leader: desc("partition_leader_info",
			"1 for the partition's leader as last seen in metadata, labelled with its id.", with("topic", "partition", "broker")),
		lag: desc("partition_lag",
			"Messages between the next offset to fetch and the leader's high watermark.", with("topic", "partition")),
		topicLag: desc("topic_lag",
			"Messages between the next offsets to fetch and the leaders' high watermarks, summed over the topic's partitions read now.", with("topic")),
	}
	if cfg.registerer != nil {
		if err := cfg.registerer.Register(c); err != nil {
			return nil, fmt.Errorf("registering the kafka reader collector: %w", err)
		}
	}
	return c, nil
}

// Add makes the collector report r too.
func (c *Collector) Add(r *kafka.Reader) { c.readers.Add(r) }

// Remove stops reporting r; its series leave the next scrape.
func (c *Collector) Remove(r *kafka.Reader) { c.readers.Remove(r) }

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ds := []*prometheus.Desc{c.fetched, c.sameRack, c.crossRack, c.reroutes, c.rackInactive, c.topicLag}
	if c.partitions {
		ds = []*prometheus.Desc{c.fetched, c.sameRack, c.crossRack, c.reroutes, c.rackInactive, c.replica, c.leader, c.lag}
	}
	for _, d := range append(ds, c.writerDescs.all()...) {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range c.readers.RoutingStats() {
		c.collect(ch, g)
	}
	c.collectWriters(ch)
}

func (c *Collector) collect(ch chan<- prometheus.Metric, g kafka.GroupRoutingStats) {
	l := func(extra ...string) []string { return append([]string{g.ClientID, g.GroupID}, extra...) }
	ch <- prometheus.MustNewConstMetric(c.sameRack, prometheus.CounterValue, float64(g.SameRackBytes), l()...)
	ch <- prometheus.MustNewConstMetric(c.crossRack, prometheus.CounterValue, float64(g.CrossRackBytes), l()...)
	for _, b := range g.Brokers {
		ch <- prometheus.MustNewConstMetric(c.fetched, prometheus.CounterValue, float64(b.Bytes), l(strconv.Itoa(b.ID), b.Rack)...)
	}
	for reason, n := range g.Reroutes { // every known reason, from the first scrape
		ch <- prometheus.MustNewConstMetric(c.reroutes, prometheus.CounterValue, float64(n), l(string(reason))...)
	}
	for _, ri := range g.RackInactive {
		ch <- prometheus.MustNewConstMetric(c.rackInactive, prometheus.GaugeValue, 1, l(string(ri.Cause))...)
	}
	if !c.partitions {
		c.collectTopics(ch, g, l)
		return
	}
	for _, p := range g.Partitions {
		if p.Broker < 0 {
			continue // not read now (in group mode, maybe by another member)
		}
		partition := strconv.Itoa(p.Partition)
		ch <- prometheus.MustNewConstMetric(c.replica, prometheus.GaugeValue, 1, l(p.Topic, partition, strconv.Itoa(p.Broker), p.BrokerRack)...)
		if p.Leader >= 0 {
			ch <- prometheus.MustNewConstMetric(c.leader, prometheus.GaugeValue, 1, l(p.Topic, partition, strconv.Itoa(p.Leader))...)
		}
		if p.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(p.Lag), l(p.Topic, partition)...)
		}
	}
}

// collectTopics reports the lag of the partitions read now, summed by topic.
func (c *Collector) collectTopics(ch chan<- prometheus.Metric, g kafka.GroupRoutingStats, l func(...string) []string) {
	for topic, lag := range g.LagByTopic() {
		ch <- prometheus.MustNewConstMetric(c.topicLag, prometheus.GaugeValue, float64(lag), l(topic)...)
	}
}
