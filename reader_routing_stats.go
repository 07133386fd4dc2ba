package kafka

import (
	"sort"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/routing"
)

// RoutingStats is a snapshot of a Reader's cumulative routing counters
// (Reader.RoutingStats). Unlike Stats, reading them resets nothing: every
// counter only grows for the life of the Reader, so any number of
// collectors may read them, and rates come from differences between two
// snapshots.
type RoutingStats struct {
	// Rack is the Reader's rack (ReaderConfig.Rack or Dialer.RackID), ""
	// when it has none.
	Rack string

	// Bytes counts the fetch response bytes (record batches) read.
	Bytes int64

	// SameRackBytes counts the bytes read from brokers in the Reader's
	// rack, CrossRackBytes the others: without a Rack every byte is
	// cross-rack.
	SameRackBytes  int64
	CrossRackBytes int64

	// RackBytes counts the bytes by the rack of the broker that served
	// them ("" for a broker without broker.rack), whether or not the
	// Reader has a Rack: before turning Rack on, RackShare tells what
	// share of the bytes already comes from the rack it would use.
	RackBytes map[string]int64

	// Reroutes counts the moves of every partition's reads by reason.
	Reroutes map[RerouteReason]int64

	// Brokers lists, by id, every broker the Reader has read bytes from.
	Brokers []BrokerRoutingStats

	// Partitions lists, by topic and partition, every partition the
	// Reader has fetched (in group mode, also those it no longer owns).
	Partitions []PartitionRoutingStats

	// RackInactive lists why rack-aware fetching does nothing, if it was
	// found so (Stats().RackInactive, which no call resets either).
	RackInactive []RackInactive
}

// BrokerRoutingStats is the cumulative traffic of one broker.
type BrokerRoutingStats struct {
	ID    int
	Rack  string // broker.rack as metadata says, "" when it has none
	Bytes int64  // fetch response bytes read from it
}

// PartitionRoutingStats is the routing of one partition: where it is read
// now, the bytes read from brokers in and out of the client's rack, and the
// moves of its reads. In RoutingStats its counters (Bytes, SameRackBytes,
// CrossRackBytes, Reroutes) are cumulative since the Reader started; in
// ReaderStats.Routing they cover the time since the previous call to Stats.
type PartitionRoutingStats struct {
	Topic     string
	Partition int

	// Broker is the replica the partition is read from now (-1: not being
	// read), BrokerRack its rack; Leader is the leader as last seen.
	Broker     int
	BrokerRack string
	Leader     int

	// Bytes counts the fetch response bytes read, SameRackBytes those from
	// brokers in the Reader's rack, CrossRackBytes the others (every byte
	// without a Rack).
	Bytes          int64
	SameRackBytes  int64
	CrossRackBytes int64

	// Reroutes counts the moves from one broker to another by reason.
	Reroutes map[RerouteReason]int64

	// Offset is the next offset to fetch; HighWatermark the leader's high
	// watermark as last known (from the leader's fetch answers and
	// ListOffsets lookups — ReadLag, ReadLagInterval —, and while a follower
	// is read from its answers, which trail the leader's by about one
	// replica-fetch round); Lag is HighWatermark - Offset, never
	// below 0. All three are -1 before the first fetch answered.
	Offset        int64
	HighWatermark int64
	Lag           int64
}

// RackShare is the share of the bytes read from brokers in rack (0 when
// nothing was read).
func (s RoutingStats) RackShare(rack string) float64 {
	if s.Bytes == 0 {
		return 0
	}
	return float64(s.RackBytes[rack]) / float64(s.Bytes)
}

// SameRackRatio is the share of the bytes read from brokers in the
// Reader's rack (0 when nothing was read).
func (s RoutingStats) SameRackRatio() float64 {
	if s.Bytes == 0 {
		return 0
	}
	return float64(s.SameRackBytes) / float64(s.Bytes)
}

// SameRackRatio is the share of the partition's bytes read from brokers in
// the Reader's rack (0 when nothing was read).
func (p PartitionRoutingStats) SameRackRatio() float64 {
	total := p.SameRackBytes + p.CrossRackBytes
	if total == 0 {
		return 0
	}
	return float64(p.SameRackBytes) / float64(total)
}

// RoutingStats returns the Reader's cumulative routing counters. It may be
// called at any rate from any goroutine; it resets nothing (Stats still
// resets its own counters, as in kafka-go).
func (r *Reader) RoutingStats() RoutingStats {
	out := r.stats.totals.snapshot(r.config.Rack)
	// The current replica comes from the route Stats shows too.
	r.stats.mu.Lock()
	for i := range out.Partitions {
		p := &out.Partitions[i]
		if rs := r.stats.routing[topicPartition{p.Topic, p.Partition}]; rs != nil {
			p.Broker, p.BrokerRack, p.Leader = rs.broker, rs.brokerRack, rs.leader
		}
	}
	r.stats.mu.Unlock()
	out.RackInactive = r.rackStatus()
	return out
}

// routingTotals holds the cumulative counters behind RoutingStats.
type routingTotals struct {
	mu         sync.Mutex
	brokers    map[int]*BrokerRoutingStats
	partitions map[topicPartition]*partitionTotals
}

type partitionTotals struct {
	bytes, same, cross int64
	reroutes           map[RerouteReason]int64
	offset, hw         int64
	hwAt               time.Time // when a fetch answer or ListOffsets last gave hw
	// polling: a fetch of the partition waits at the engine. Its fetch
	// session leaves a partition out of the answers while nothing changed
	// (KIP-227), and the engine fails the fetch when the broker stops
	// answering: meanwhile the last hw is current.
	polling bool
}

// partition returns tp's counters, creating them; t.mu must be held.
func (t *routingTotals) partition(tp topicPartition) *partitionTotals {
	if t.partitions == nil {
		t.partitions = map[topicPartition]*partitionTotals{}
	}
	p := t.partitions[tp]
	if p == nil {
		p = &partitionTotals{offset: -1, hw: -1}
		t.partitions[tp] = p
	}
	return p
}

// fetched counts n bytes of tp served by broker (in rack).
func (t *routingTotals) fetched(tp topicPartition, broker int, rack string, n int64, sameRack bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.brokers == nil {
		t.brokers = map[int]*BrokerRoutingStats{}
	}
	b := t.brokers[broker]
	if b == nil {
		b = &BrokerRoutingStats{ID: broker}
		t.brokers[broker] = b
	}
	b.Rack = rack // metadata may have learnt it since
	b.Bytes += n
	p := t.partition(tp)
	p.bytes += n
	if sameRack {
		p.same += n
	} else {
		p.cross += n
	}
}

// reroute counts one move of tp's reads.
func (t *routingTotals) reroute(tp topicPartition, reason RerouteReason) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.partition(tp)
	if p.reroutes == nil {
		p.reroutes = map[RerouteReason]int64{}
	}
	p.reroutes[reason]++
}

// position records tp's next offset and the high watermark a fetch answer
// carried. A follower's trails the leader's, so it only ever raises what
// the leader last said; the leader's own replaces it (it may go down, after
// an unclean election or with a recreated topic).
func (t *routingTotals) position(tp topicPartition, offset, hw int64, fromLeader bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.partition(tp)
	p.offset = offset
	if fromLeader || hw > p.hw {
		p.hw = hw
	}
	p.hwAt = time.Now()
}

// fetchedHighWatermark returns the high watermark tp's latest fetch answer
// carried, if one arrived within maxAge or a fetch of tp is polling: the
// periodic lag of a partition being fetched costs no request.
func (t *routingTotals) fetchedHighWatermark(tp topicPartition, maxAge time.Duration) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.partitions[tp]
	if p == nil || p.hw < 0 || (!p.polling && time.Since(p.hwAt) > maxAge) {
		return 0, false
	}
	return p.hw, true
}

// setPolling records whether a fetch of tp waits at the engine.
func (t *routingTotals) setPolling(tp topicPartition, polling bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partition(tp).polling = polling
}

// leaderHighWatermark records the leader's high watermark learnt besides
// the fetches (ListOffsets at the leader: ReadLag, ReadLagInterval), which
// a follower being read does not tell. It only raises the value: a fetch
// answer may be newer than the lookup. It reports whether the partition's
// position is at hw or past it.
func (t *routingTotals) leaderHighWatermark(tp topicPartition, hw int64) (caughtUp bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.partition(tp)
	if hw > p.hw {
		p.hw = hw
	}
	return p.offset >= 0 && p.offset >= hw
}

// positions fills in the current position of each partition in ps.
func (t *routingTotals) positions(ps []PartitionRoutingStats) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range ps {
		if p := t.partitions[topicPartition{ps[i].Topic, ps[i].Partition}]; p != nil {
			ps[i].Offset, ps[i].HighWatermark, ps[i].Lag = p.offset, p.hw, p.lag()
		}
	}
}

// lag is the partition's lag, -1 while unknown.
func (p *partitionTotals) lag() int64 {
	if p.offset >= 0 && p.hw >= 0 {
		return max(0, p.hw-p.offset)
	}
	return -1
}

// snapshot copies the counters; rack is the Reader's.
func (t *routingTotals) snapshot(rack string) RoutingStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := RoutingStats{
		Rack:      rack,
		RackBytes: map[string]int64{},
		Reroutes:  map[RerouteReason]int64{},
		Brokers:   make([]BrokerRoutingStats, 0, len(t.brokers)),
	}
	for _, b := range t.brokers {
		out.Brokers = append(out.Brokers, *b)
		out.RackBytes[b.Rack] += b.Bytes
	}
	sort.Slice(out.Brokers, func(i, j int) bool { return out.Brokers[i].ID < out.Brokers[j].ID })
	out.Partitions = make([]PartitionRoutingStats, 0, len(t.partitions))
	for tp, p := range t.partitions {
		ps := PartitionRoutingStats{
			Topic: tp.topic, Partition: tp.partition, Broker: -1, Leader: -1,
			Bytes: p.bytes, SameRackBytes: p.same, CrossRackBytes: p.cross,
			Reroutes: make(map[RerouteReason]int64, len(p.reroutes)),
			Offset:   p.offset, HighWatermark: p.hw, Lag: p.lag(),
		}
		for reason, n := range p.reroutes {
			ps.Reroutes[reason] = n
			out.Reroutes[reason] += n
		}
		out.Bytes += p.bytes
		out.SameRackBytes += p.same
		out.CrossRackBytes += p.cross
		out.Partitions = append(out.Partitions, ps)
	}
	sortPartitionRoutingStats(out.Partitions)
	return out
}

// RerouteReason says why a partition's reads moved from one broker to
// another. Its value is a stable machine-readable ID ([a-z_]+, such as
// "preferred_replica"): the key of the Reroutes maps of
// PartitionRoutingStats and RoutingStats, and the reason label of the
// metrics modules (metrics/kafkaprom, metrics/kafkaotel), so it never
// changes. Sentence gives the English text log lines show. The list may
// grow: code that reads the maps should not assume it is closed.
type RerouteReason string

// The reasons reads move, with their IDs (internal/routing names the same
// values).
const (
	// ReroutePreferredReplica ("preferred_replica"): the leader named an
	// in-sync replica in the client's rack.
	ReroutePreferredReplica RerouteReason = RerouteReason(routing.ReasonPreferred)
	// RerouteTTL ("preference_expired"): RackPreferenceTTL passed, reads
	// went back to the leader to ask again.
	RerouteTTL RerouteReason = RerouteReason(routing.ReasonTTL)
	// RerouteFollowerFailed ("follower_failed"): the follower failed (dial,
	// connection, stall, a partition error) or cools down.
	RerouteFollowerFailed RerouteReason = RerouteReason(routing.ReasonFollowerFailed)
	// RerouteFollowerGone ("follower_left_isr"): metadata shows the
	// follower out of the ISR, offline or unknown.
	RerouteFollowerGone RerouteReason = RerouteReason(routing.ReasonFollowerGone)
	// RerouteUnknownReplica ("unknown_replica"): the replica the leader
	// named is not in the client's metadata or ISR.
	RerouteUnknownReplica RerouteReason = RerouteReason(routing.ReasonUnknownReplica)
	// RerouteLeaderChanged ("leader_changed"): another broker leads the
	// partition.
	RerouteLeaderChanged RerouteReason = RerouteReason(routing.ReasonLeaderChanged)
	// RerouteLeaderPreferred ("leader_no_preference"): the leader, asked
	// again, named no replica.
	RerouteLeaderPreferred RerouteReason = RerouteReason(routing.ReasonLeaderPreferred)
	// RerouteCoolingDown ("replica_cooling_down"): the replica the leader
	// named cools down after a failure.
	RerouteCoolingDown RerouteReason = RerouteReason(routing.ReasonCoolingDown)
	// RerouteFlapDamped ("flap_damped"): the partition moved to a follower
	// too often in the last minute.
	RerouteFlapDamped RerouteReason = RerouteReason(routing.ReasonFlapDamped)
	// RerouteLeaderError ("leader_failed"): the leader failed.
	RerouteLeaderError RerouteReason = RerouteReason(routing.ReasonLeaderError)
	// RerouteStaleClient ("stale_metadata"): a follower said the client's
	// metadata is stale.
	RerouteStaleClient RerouteReason = RerouteReason(routing.ReasonStaleClient)
	// RerouteClientChoice ("client_selected"): the leader named no replica
	// and the Reader's ReplicaSelector picked one.
	RerouteClientChoice RerouteReason = RerouteReason(routing.ReasonClientChoice)
	// RerouteFollowerLagging ("follower_lagging"): the Reader waited at the
	// follower longer than MaxFollowerLag for records the leader had.
	RerouteFollowerLagging RerouteReason = RerouteReason(routing.ReasonFollowerLagging)
	// RerouteLeaderUnreachable ("leader_unreachable"): the leader's dial
	// failed or its fetch stalled while it stays leader (a broken path
	// from the client): an in-sync follower serves until a probe reaches
	// the leader again.
	RerouteLeaderUnreachable RerouteReason = RerouteReason(routing.ReasonLeaderUnreachable)
	// RerouteLeaderReachable ("leader_reachable"): a probe reached the
	// unreachable leader: reads go back to it.
	RerouteLeaderReachable RerouteReason = RerouteReason(routing.ReasonLeaderReachable)
)

// rerouteSentences are the texts of the log lines; a reason added to
// internal/routing belongs here too (a test checks every one has a text).
var rerouteSentences = map[RerouteReason]string{
	ReroutePreferredReplica:  "preferred replica",
	RerouteTTL:               "preference expired",
	RerouteFollowerFailed:    "follower failed",
	RerouteFollowerGone:      "follower left the ISR",
	RerouteUnknownReplica:    "preferred replica not in metadata or ISR",
	RerouteLeaderChanged:     "leader changed",
	RerouteLeaderPreferred:   "leader named no preference",
	RerouteCoolingDown:       "preferred replica cooling down",
	RerouteFlapDamped:        "replica switch budget used up",
	RerouteLeaderError:       "leader failed",
	RerouteStaleClient:       "client metadata stale",
	RerouteClientChoice:      "client-selected replica",
	RerouteFollowerLagging:   "follower lagging",
	RerouteLeaderUnreachable: "leader unreachable",
	RerouteLeaderReachable:   "leader reachable again",
}

// Sentence is the English text of the reason, as log lines show it
// ("preferred replica not in metadata or ISR"). It may be reworded; match
// on the reason itself, never on its sentence. An unknown reason's
// sentence is its ID.
func (r RerouteReason) Sentence() string {
	if s, ok := rerouteSentences[r]; ok {
		return s
	}
	return string(r)
}

// RerouteReasons returns every reason the Reader may report, for
// collectors that create their series up front (a counter that exists at
// 0 before its first increment gives rate() a start).
func RerouteReasons() []RerouteReason {
	// A reason added to internal/routing belongs here too.
	return []RerouteReason{
		ReroutePreferredReplica, RerouteTTL, RerouteFollowerFailed, RerouteFollowerGone,
		RerouteUnknownReplica, RerouteLeaderChanged, RerouteLeaderPreferred,
		RerouteCoolingDown, RerouteFlapDamped, RerouteLeaderError, RerouteStaleClient,
		RerouteClientChoice, RerouteFollowerLagging, RerouteLeaderUnreachable, RerouteLeaderReachable,
	}
}

// MergeRoutingStats sums the routing counters of several Readers, for
// instance one Reader per partition of a topic, as metrics collectors
// report them under one set of labels. A partition present in several is
// described by the one reading it now (Broker >= 0), else by the first;
// Rack is the first non-empty one.
func MergeRoutingStats(stats ...RoutingStats) RoutingStats {
	out := RoutingStats{RackBytes: map[string]int64{}, Reroutes: map[RerouteReason]int64{}}
	brokers := map[int]int{}               // id → index in out.Brokers
	partitions := map[topicPartition]int{} // → index in out.Partitions
	for _, s := range stats {
		if out.Rack == "" {
			out.Rack = s.Rack
		}
		out.Bytes += s.Bytes
		out.SameRackBytes += s.SameRackBytes
		out.CrossRackBytes += s.CrossRackBytes
		for rack, n := range s.RackBytes {
			out.RackBytes[rack] += n
		}
		for reason, n := range s.Reroutes {
			out.Reroutes[reason] += n
		}
		for _, ri := range s.RackInactive {
			if !hasRackCause(out.RackInactive, ri.Cause) {
				out.RackInactive = append(out.RackInactive, ri)
			}
		}
		for _, b := range s.Brokers {
			i, ok := brokers[b.ID]
			if !ok {
				brokers[b.ID] = len(out.Brokers)
				out.Brokers = append(out.Brokers, b)
				continue
			}
			out.Brokers[i].Bytes += b.Bytes
			if b.Rack != "" {
				out.Brokers[i].Rack = b.Rack
			}
		}
		for _, p := range s.Partitions {
			tp := topicPartition{p.Topic, p.Partition}
			i, ok := partitions[tp]
			if !ok {
				partitions[tp] = len(out.Partitions)
				p.Reroutes = copyReroutes(p.Reroutes)
				out.Partitions = append(out.Partitions, p)
				continue
			}
			merged := &out.Partitions[i]
			if merged.Broker < 0 && p.Broker >= 0 {
				merged.Broker, merged.BrokerRack, merged.Leader = p.Broker, p.BrokerRack, p.Leader
				merged.Offset, merged.HighWatermark, merged.Lag = p.Offset, p.HighWatermark, p.Lag
			}
			merged.Bytes += p.Bytes
			merged.SameRackBytes += p.SameRackBytes
			merged.CrossRackBytes += p.CrossRackBytes
			for reason, n := range p.Reroutes {
				merged.Reroutes[reason] += n
			}
		}
	}
	sort.Slice(out.Brokers, func(i, j int) bool { return out.Brokers[i].ID < out.Brokers[j].ID })
	sortPartitionRoutingStats(out.Partitions)
	return out
}

func hasRackCause(found []RackInactive, c RackInactiveCause) bool {
	for _, ri := range found {
		if ri.Cause == c {
			return true
		}
	}
	return false
}

func copyReroutes(m map[RerouteReason]int64) map[RerouteReason]int64 {
	out := make(map[RerouteReason]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortPartitionRoutingStats(ps []PartitionRoutingStats) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
}

// ReaderSet is a set of Readers whose routing is reported together, as the
// metrics integrations (metrics/kafkaprom, metrics/kafkaotel) do: Readers
// sharing a client ID and group ID are summed into one entry. The zero
// value is an empty set; its methods are safe for concurrent use.
type ReaderSet struct {
	mu      sync.Mutex
	readers []*Reader
}

// NewReaderSet returns a set holding readers.
func NewReaderSet(readers ...*Reader) *ReaderSet {
	return &ReaderSet{readers: append([]*Reader(nil), readers...)}
}

// Add adds r to the set.
func (s *ReaderSet) Add(r *Reader) {
	s.mu.Lock()
	s.readers = append(s.readers, r)
	s.mu.Unlock()
}

// Remove removes r from the set (a Reader closed and replaced).
func (s *ReaderSet) Remove(r *Reader) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.readers {
		if x == r {
			s.readers = append(s.readers[:i], s.readers[i+1:]...)
			return
		}
	}
}

// GroupRoutingStats is the routing of the Readers of a set that share a
// client ID (their Dialer's) and a group ID, summed by MergeRoutingStats.
type GroupRoutingStats struct {
	ClientID string
	GroupID  string
	RoutingStats
}

// RoutingStats reads the RoutingStats of every Reader in the set and sums
// those sharing a client and group ID, in the order the first of each was
// added. Every known RerouteReason has an entry (0 until counted), so a
// counter exists before the first move it counts.
func (s *ReaderSet) RoutingStats() []GroupRoutingStats {
	s.mu.Lock()
	readers := append([]*Reader(nil), s.readers...)
	s.mu.Unlock()
	type key struct{ clientID, groupID string }
	var keys []key
	byKey := map[key][]RoutingStats{}
	for _, r := range readers {
		k := key{groupID: r.config.GroupID}
		if r.config.Dialer != nil {
			k.clientID = r.config.Dialer.ClientID
		}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r.RoutingStats())
	}
	out := make([]GroupRoutingStats, 0, len(keys))
	for _, k := range keys {
		st := MergeRoutingStats(byKey[k]...)
		for _, reason := range RerouteReasons() {
			if _, ok := st.Reroutes[reason]; !ok {
				st.Reroutes[reason] = 0
			}
		}
		out = append(out, GroupRoutingStats{ClientID: k.clientID, GroupID: k.groupID, RoutingStats: st})
	}
	return out
}

// LagByTopic sums Lag by topic over the partitions read now (Broker >= 0)
// whose lag is known: a topic's lag without one series per partition.
func (s RoutingStats) LagByTopic() map[string]int64 {
	out := map[string]int64{}
	for _, p := range s.Partitions {
		if p.Broker >= 0 && p.Lag >= 0 {
			out[p.Topic] += p.Lag
		}
	}
	return out
}
