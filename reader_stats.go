package kafka

import (
	"slices"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/consumer"
)

// ReaderStats is a data structure returned by a call to Reader.Stats that
// exposes details about the behavior of the reader. Counters and summaries
// cover the time since the previous call to Stats; gauges are current.
type ReaderStats struct {
	Dials      int64 `metric:"kafka.reader.dial.count"      type:"counter"`
	Fetches    int64 `metric:"kafka.reader.fetch.count"     type:"counter"`
	Messages   int64 `metric:"kafka.reader.message.count"   type:"counter"`
	Bytes      int64 `metric:"kafka.reader.message.bytes"   type:"counter"`
	Rebalances int64 `metric:"kafka.reader.rebalance.count" type:"counter"`
	Timeouts   int64 `metric:"kafka.reader.timeout.count"   type:"counter"`
	Errors     int64 `metric:"kafka.reader.error.count"     type:"counter"`

	DialTime   DurationStats `metric:"kafka.reader.dial.seconds"`
	ReadTime   DurationStats `metric:"kafka.reader.read.seconds"`
	WaitTime   DurationStats `metric:"kafka.reader.wait.seconds"`
	FetchSize  SummaryStats  `metric:"kafka.reader.fetch.size"`
	FetchBytes SummaryStats  `metric:"kafka.reader.fetch.bytes"`

	Offset        int64         `metric:"kafka.reader.offset"          type:"gauge"`
	Lag           int64         `metric:"kafka.reader.lag"             type:"gauge"`
	MinBytes      int64         `metric:"kafka.reader.fetch_bytes.min" type:"gauge"`
	MaxBytes      int64         `metric:"kafka.reader.fetch_bytes.max" type:"gauge"`
	MaxWait       time.Duration `metric:"kafka.reader.fetch_wait.max"  type:"gauge"`
	QueueLength   int64         `metric:"kafka.reader.queue.length"    type:"gauge"`
	QueueCapacity int64         `metric:"kafka.reader.queue.capacity"  type:"gauge"`

	ClientID  string `tag:"client_id"`
	Topic     string `tag:"topic"`
	Partition string `tag:"partition"`

	// DeprecatedFetchesWithTypo mirrors Fetches under kafka-go's misspelt
	// metric name, for dashboards that still use it.
	DeprecatedFetchesWithTypo int64 `metric:"kafak.reader.fetch.count" type:"counter"`

	// Routing describes, per partition the reader has fetched, where its
	// reads go (rack-aware fetching, ReaderConfig.Rack), in topic and
	// partition order. Its counters (bytes, reroutes) cover the time since
	// the previous call to Stats; Reader.RoutingStats has the same type
	// with counters that never reset.
	Routing []PartitionRoutingStats

	// RackInactive lists why rack-aware fetching (ReaderConfig.Rack) does
	// not take effect, each cause once, in the order the Reader found
	// them; nil while none was found or without a rack. Stats does not
	// reset it: a cause stays listed for the Reader's life.
	RackInactive []RackInactive
}

// readerStats holds the statistics of a Reader; fetchers of every
// partition update it concurrently.
type readerStats struct {
	dials, fetches, messages, bytes statCounter
	rebalances, timeouts, errors    statCounter
	dialTime, readTime, waitTime    statSummary
	fetchSize, fetchBytes           statSummary
	offset, lag                     statGauge
	partition                       string

	mu      sync.Mutex
	routing map[topicPartition]*routingStats

	totals routingTotals // never reset: Reader.RoutingStats
}

// routingStats is the live routing state of one partition.
type routingStats struct {
	broker     int
	brokerRack string
	leader     int
	reroutes   map[RerouteReason]int64
	sameRack   int64
	crossRack  int64
}

func newReaderStats(partition string) *readerStats {
	return &readerStats{partition: partition, routing: map[topicPartition]*routingStats{}}
}

// route returns the routing entry of tp, creating it; s.mu must be held.
func (s *readerStats) route(tp topicPartition) *routingStats {
	rs := s.routing[tp]
	if rs == nil {
		rs = &routingStats{broker: -1, leader: -1}
		s.routing[tp] = rs
	}
	return rs
}

// setRoute records where tp is read from now and reports whether that
// changed.
func (s *readerStats) setRoute(tp topicPartition, broker int, rack string, leader int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.route(tp)
	changed := rs.broker != broker || rs.brokerRack != rack || rs.leader != leader
	rs.broker, rs.brokerRack, rs.leader = broker, rack, leader
	return changed
}

// onFollower reports whether any partition reads from a broker other than
// its leader now.
func (s *readerStats) onFollower() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range s.routing {
		if rs.broker >= 0 && rs.leader >= 0 && rs.broker != rs.leader {
			return true
		}
	}
	return false
}

// topics returns the topics whose partitions are being read.
func (s *readerStats) topics() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for tp, rs := range s.routing {
		// A Reader reads one topic, or a few (a group's): a scan of out
		// costs less than a set, which the share's metadata loop would
		// build for every Reader of the share at each refresh.
		if rs.broker >= 0 && !slices.Contains(out, tp.topic) {
			out = append(out, tp.topic)
		}
	}
	return out
}

// reroute counts one move of tp's reads.
func (s *readerStats) reroute(tp topicPartition, reason routeReason) {
	s.mu.Lock()
	rs := s.route(tp)
	if rs.reroutes == nil {
		rs.reroutes = map[RerouteReason]int64{}
	}
	rs.reroutes[reason]++
	s.mu.Unlock()
	s.totals.reroute(tp, reason)
}

// fetchedBytes counts n response bytes of tp read in or out of the rack.
func (s *readerStats) fetchedBytes(tp topicPartition, n int64, sameRack bool) {
	s.mu.Lock()
	rs := s.route(tp)
	if sameRack {
		rs.sameRack += n
	} else {
		rs.crossRack += n
	}
	s.mu.Unlock()
}

// routingSnapshot returns the routing of every partition and resets its
// counters; the position (Offset, HighWatermark, Lag) is the current one.
func (s *readerStats) routingSnapshot() []PartitionRoutingStats {
	s.mu.Lock()
	out := make([]PartitionRoutingStats, 0, len(s.routing))
	for tp, rs := range s.routing {
		pr := PartitionRoutingStats{
			Topic: tp.topic, Partition: tp.partition,
			Broker: rs.broker, BrokerRack: rs.brokerRack, Leader: rs.leader,
			Bytes:         rs.sameRack + rs.crossRack,
			SameRackBytes: rs.sameRack, CrossRackBytes: rs.crossRack,
			Reroutes: rs.reroutes,
			Offset:   -1, HighWatermark: -1, Lag: -1,
		}
		if pr.Reroutes == nil {
			pr.Reroutes = map[RerouteReason]int64{}
		}
		rs.reroutes, rs.sameRack, rs.crossRack = nil, 0, 0
		out = append(out, pr)
	}
	s.mu.Unlock()
	s.totals.positions(out)
	sortPartitionRoutingStats(out)
	return out
}

// RackInactiveCause says why rack-aware fetching (ReaderConfig.Rack) is not
// taking effect. As RerouteReason, its value is a stable machine-readable
// ID ([a-z_]+), the cause label of the metrics modules; Sentence is the
// text log lines show.
type RackInactiveCause string

const (
	// RackNoReplicaSelector ("no_replica_selector"): the leaders answer
	// fetches carrying the rack without naming a preferred replica,
	// although an in-sync replica is in the client's rack: the brokers lack
	// replica.selector.class
	// (org.apache.kafka.common.replica.RackAwareReplicaSelector).
	RackNoReplicaSelector RackInactiveCause = consumer.CauseNoReplicaSelector
	// RackNoBrokerInRack ("no_broker_in_rack"): no broker has broker.rack
	// equal to the client's rack (a typo, or AZ names where the brokers use
	// AZ IDs).
	RackNoBrokerInRack RackInactiveCause = consumer.CauseNoBrokerInRack
	// RackFetchTooOld ("fetch_too_old"): a broker supports Fetch only below
	// v11 (Kafka before 2.4), which cannot carry the rack.
	RackFetchTooOld RackInactiveCause = consumer.CauseFetchTooOld
)

// Sentence is the English text of the cause, as log lines show it. It may
// be reworded; match on the cause itself. An unknown cause's sentence is
// its ID.
func (c RackInactiveCause) Sentence() string {
	switch c {
	case RackNoReplicaSelector:
		return "no replica selector"
	case RackNoBrokerInRack:
		return "no broker in the client's rack"
	case RackFetchTooOld:
		return "brokers below Fetch v11"
	}
	return string(c)
}

// RackInactive is one cause, found by the Reader, of rack-aware fetching
// not taking effect.
type RackInactive struct {
	Cause RackInactiveCause
	// Brokers are the brokers at fault when the cause has some: the
	// leaders naming no replica, the brokers below Fetch v11.
	Brokers []int
	// Detail says what was seen, as the log line did.
	Detail string
	// Since is when the cause was found.
	Since time.Time
}

func (ri RackInactive) String() string {
	return "rack-aware fetching is inactive (" + ri.Cause.Sentence() + "): " + ri.Detail
}
