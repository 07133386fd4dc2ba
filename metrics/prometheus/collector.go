// Package prometheus exports the routing of github.com/rackfetch/kafka-go
// Readers (Reader.RoutingStats) as Prometheus metrics. It is a module of its
// own, so the library itself never depends on client_golang.
//
//	c := kafkaprom.NewCollector(reader)
//	prometheus.MustRegister(c)
//
// Metrics, each labelled client_id and group_id (the Readers' Dialer.ClientID
// and GroupID):
//
//	kafka_reader_fetched_bytes_total{broker,rack}     fetch response bytes read from each broker (rack: its broker.rack)
//	kafka_reader_same_rack_bytes_total                bytes read from brokers in the Reader's rack
//	kafka_reader_cross_rack_bytes_total               bytes read from the others (every byte without a Rack)
//	kafka_reader_reroutes_total{reason}               moves of a partition's reads, by kafka.RerouteReason
//	kafka_reader_partition_replica{topic,partition,rack}  the broker id a partition is read from now
//	kafka_reader_partition_leader{topic,partition}    the partition's leader as last seen
//	kafka_reader_partition_lag{topic,partition}       messages behind the leader's high watermark
//
// The partition gauges cover the partitions being read now. Readers with
// the same client and group IDs are summed into one series set
// (kafka.MergeRoutingStats; for example one Reader per partition): their
// per-partition gauges come from the Reader reading the partition.
package prometheus

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/internal/readerset"
)

// Collector is a prometheus.Collector over the routing counters of one or
// more Readers. Its methods are safe for concurrent use.
type Collector struct {
	readers *readerset.Set

	fetched, sameRack, crossRack, reroutes *prometheus.Desc
	replica, leader, lag                   *prometheus.Desc
	rackInactive                           *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector over readers; Add and Remove change the
// set later (a Reader closed and replaced).
func NewCollector(readers ...*kafka.Reader) *Collector {
	reader := []string{"client_id", "group_id"}
	with := func(labels ...string) []string { return append(append([]string{}, reader...), labels...) }
	return &Collector{
		readers: readerset.New(readers...),
		fetched: prometheus.NewDesc("kafka_reader_fetched_bytes_total",
			"Fetch response bytes read from each broker, labelled with the broker's rack.", with("broker", "rack"), nil),
		sameRack: prometheus.NewDesc("kafka_reader_same_rack_bytes_total",
			"Fetch response bytes read from brokers in the reader's rack.", reader, nil),
		crossRack: prometheus.NewDesc("kafka_reader_cross_rack_bytes_total",
			"Fetch response bytes read from brokers outside the reader's rack (all of them when it has no rack).", reader, nil),
		reroutes: prometheus.NewDesc("kafka_reader_reroutes_total",
			"Moves of a partition's reads from one broker to another, by reason.", with("reason"), nil),
		replica: prometheus.NewDesc("kafka_reader_partition_replica",
			"Id of the broker the partition is read from now, labelled with its rack.", with("topic", "partition", "rack"), nil),
		leader: prometheus.NewDesc("kafka_reader_partition_leader",
			"Id of the partition's leader as last seen in metadata.", with("topic", "partition"), nil),
		lag: prometheus.NewDesc("kafka_reader_partition_lag",
			"Messages between the next offset to fetch and the leader's high watermark.", with("topic", "partition"), nil),
		rackInactive: prometheus.NewDesc("kafka_reader_rack_inactive",
			"1 for each reason found why rack-aware fetching does nothing (no replica selector, no broker in the rack, brokers below Fetch v11).", with("cause"), nil),
	}
}

// Add makes the collector report r too.
func (c *Collector) Add(r *kafka.Reader) { c.readers.Add(r) }

// Remove stops reporting r; its series leave the next scrape.
func (c *Collector) Remove(r *kafka.Reader) { c.readers.Remove(r) }

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.fetched, c.sameRack, c.crossRack, c.reroutes, c.replica, c.leader, c.lag, c.rackInactive} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range c.readers.Groups() {
		c.collect(ch, g)
	}
}

func (c *Collector) collect(ch chan<- prometheus.Metric, g readerset.Group) {
	l := func(extra ...string) []string { return append([]string{g.ClientID, g.GroupID}, extra...) }
	s := g.Stats
	ch <- prometheus.MustNewConstMetric(c.sameRack, prometheus.CounterValue, float64(s.SameRackBytes), l()...)
	ch <- prometheus.MustNewConstMetric(c.crossRack, prometheus.CounterValue, float64(s.CrossRackBytes), l()...)
	for _, b := range s.Brokers {
		ch <- prometheus.MustNewConstMetric(c.fetched, prometheus.CounterValue, float64(b.Bytes), l(strconv.Itoa(b.ID), b.Rack)...)
	}
	for reason, n := range s.Reroutes { // every known reason, from the first scrape
		ch <- prometheus.MustNewConstMetric(c.reroutes, prometheus.CounterValue, float64(n), l(string(reason))...)
	}
	for _, ri := range s.RackInactive {
		ch <- prometheus.MustNewConstMetric(c.rackInactive, prometheus.GaugeValue, 1, l(string(ri.Cause))...)
	}
	for _, p := range s.Partitions {
		if p.Broker < 0 {
			continue // not read now (in group mode, maybe by another member)
		}
		partition := strconv.Itoa(p.Partition)
		ch <- prometheus.MustNewConstMetric(c.replica, prometheus.GaugeValue, float64(p.Broker), l(p.Topic, partition, p.BrokerRack)...)
		if p.Leader >= 0 {
			ch <- prometheus.MustNewConstMetric(c.leader, prometheus.GaugeValue, float64(p.Leader), l(p.Topic, partition)...)
		}
		if p.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(p.Lag), l(p.Topic, partition)...)
		}
	}
}
