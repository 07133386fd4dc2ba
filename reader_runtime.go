package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/protocol"
)

// The background work of the Readers sharing an engine
// (reader_engine.go) — metadata refreshes while partitions read
// from followers or replicas cool down, the leaders' high watermarks for
// the lag check, the replica cooldowns and their probes — runs once per
// share in internal/consumer, keyed by what it watches (a leader, a
// broker), not once per Reader, whose count would multiply it (hundreds
// of partition Readers in one process are usual). The rack check
// (rackCheck below) is the share's too. A group Reader has a share, so a
// runtime, of its own. This file adapts the share to it: the metadata
// refreshes, the leaders' high watermarks and the rack check.

// consumerRuntime is the share's background work.
type consumerRuntime = consumer.Runtime[topicPartition]

// newConsumerRuntime makes the runtime of s, whose Readers have cfg's
// engine settings (engineKey: MaxFollowerLag among them).
func newConsumerRuntime(s *engineShare, cfg *ReaderConfig) *consumerRuntime {
	var sampling time.Duration
	if cfg.MaxFollowerLag > 0 {
		sampling = cfg.followerLagSampling()
	}
	return consumer.New(consumer.Config[topicPartition]{
		Members: s.runtimeMembers,
		Refresh: s.refresh,
		Changes: s.cluster.meta.Changes,
		ListEnds: func(ctx context.Context, leader int, tps []topicPartition) (map[topicPartition]int64, error) {
			return s.listLeaderEnds(ctx, leader, tps)
		},
		Dial:            s.probeDial,
		Logf:            func(format string, args ...interface{}) { s.logf(false, format, args...) },
		Errorf:          func(format string, args ...interface{}) { s.logf(true, format, args...) },
		Sampling:        sampling,
		QuietSampling:   readerQuietSampling,
		PinnedInterval:  func() time.Duration { return readerPinnedMetadataInterval },
		CoolingInterval: func() time.Duration { return readerCoolingMetadataInterval },
	})
}

// refresh reads the metadata of topics and tells the share's cooldowns
// which brokers it lists: they forget the others (routing.Cooldowns.Listed).
func (s *engineShare) refresh(ctx context.Context, topics []string) error {
	if err := s.cluster.refresh(ctx, topics...); err != nil {
		return err
	}
	s.cooldownsSawMetadata()
	return nil
}

// runtimeMember is a Reader as the runtime sees it: what its partitions
// read now (readerStats).
type runtimeMember struct{ r *Reader }

func (m runtimeMember) OnFollower() bool                        { return m.r.stats.onFollower() }
func (m runtimeMember) Topics() []string                        { return m.r.stats.topics() }
func (m runtimeMember) FollowerReads() map[int][]topicPartition { return m.r.stats.followerReads() }
func (m runtimeMember) LeaderHighWatermark(tp topicPartition, hw int64) bool {
	return m.r.stats.totals.leaderHighWatermark(tp, hw) // the lag RoutingStats reports
}

func (s *engineShare) runtimeMembers() []consumer.Member[topicPartition] {
	rs := s.members()
	out := make([]consumer.Member[topicPartition], len(rs))
	for i, r := range rs {
		out[i] = runtimeMember{r}
	}
	return out
}

// logf logs through a Reader of the share (its ErrorLogger for faults).
func (s *engineShare) logf(fault bool, format string, args ...interface{}) {
	r := s.anyMember()
	switch {
	case r == nil:
	case fault:
		r.errorf(format, args...)
	default:
		r.logf(format, args...)
	}
}

// The Reader's metadata: one view per partition, the cluster cache
// (cluster.go, monotonic per topic ID), which every refresh of the Reader
// updates. Each fetcher hands what the cache says about its partition to
// its router between fetches, and acts on the metadata the router accepted
// (replicaSelector.partition): the fetcher and the router never disagree
// about the leader.
//
// Besides the refreshes the routing asks for, the Readers of a share
// re-read metadata on their own — once per share (internal/consumer), not
// per Reader or partition — while they need news that no fetch response
// carries:
//   - while a partition reads from a follower: nothing in a follower's
//     answers says it left the ISR, so a follower that left it is left
//     within one refresh (readerPinnedMetadataInterval);
//   - while a replica cools down: the ISR says when it left and came back,
//     which ends its cooldown (readerCoolingMetadataInterval) — except a
//     broker refusing its probes for long (routing.Cooldowns.Active).
// Every refresh tells the cooldowns which brokers metadata lists
// (engineShare.refresh).

// Variables so that tests can shorten them.
var (
	readerPinnedMetadataInterval = 30 * time.Second
	// readerQuietSampling bounds the time between two reads of a leader's
	// high watermarks while they do not move and no records flow
	// (internal/consumer/pace.go). A sample then adds nothing the ISR
	// check does not: records reaching a healthy follower bring the
	// sampling back at once (Runtime.Flowing), and a follower that stops
	// replicating leaves the ISR within 1.5 × replica.lag.time.max.ms (45 s
	// by default: the leader looks every half of it), which the metadata
	// re-read while on followers (readerPinnedMetadataInterval) sees: the
	// first records after a quiet spell wait at most about 75 s at such a
	// follower (a sample every 30 s would make it about 40 s, for two more
	// requests a minute per leader). It is kept as a safety net at the
	// age the Java consumer gives its metadata (metadata.max.age.ms).
	readerQuietSampling           = 5 * time.Minute
	readerCoolingMetadataInterval = time.Second
)

// refreshMetadata reads the metadata of topics into the cluster cache and
// tells the fetchers of the share (consumer.Runtime.Version). Callers
// asking for the same topics while a refresh is in flight share it (the
// cache's single flight): a group Reader's partitions all start at once.
func (r *Reader) refreshMetadata(ctx context.Context, topics ...string) error {
	return r.share.rt.Refresh(ctx, topics...)
}

// The leaders' high watermarks for the lag check (internal/routing/lag.go). While
// partitions read from followers, nothing in the followers' answers says
// how far the leader is: every MaxFollowerLag/8 the share's runtime
// (internal/consumer, once per share of Readers, not per Reader) sends each
// of their leaders one ListOffsets (latest, read uncommitted: the high
// watermark) for all of them, over the control connection. A fetcher hands
// the newest answer for its partition to its router between fetches.

// followerReads returns the partitions read from a follower now, by
// leader.
func (s *readerStats) followerReads() map[int][]topicPartition {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int][]topicPartition{}
	for tp, rs := range s.routing {
		if rs.broker >= 0 && rs.leader >= 0 && rs.broker != rs.leader {
			out[rs.leader] = append(out[rs.leader], tp)
		}
	}
	return out
}

// listLeaderEnds asks leader for the high watermarks of tps in one
// ListOffsets request and returns those it answered; a partition it does
// not lead (any more) is skipped.
func (s *engineShare) listLeaderEnds(ctx context.Context, leader int, tps []topicPartition) (map[topicPartition]int64, error) {
	cl := s.cluster
	b, ok := cl.broker(leader)
	if !ok {
		return nil, fmt.Errorf("broker %d is not in the cluster metadata", leader)
	}
	req := &protocol.ListOffsetsRequest{ReplicaID: -1}
	for _, tp := range tps {
		p, ok := cl.partition(tp.topic, tp.partition)
		if !ok || p.Leader.ID != leader {
			continue
		}
		req.AddPartition(tp.topic, protocol.ListOffsetsRequestPartition{
			PartitionIndex: int32(tp.partition), CurrentLeaderEpoch: int32(p.LeaderEpoch), Timestamp: LastOffset,
		})
	}
	if len(req.Topics) == 0 {
		return nil, nil
	}
	var failed, stale []string
	hws := map[topicPartition]int64{}
	err, _ := cl.attempt(ctx, controlTarget{leader, hostPort(b)}, func(ctx context.Context, c *Conn) error {
		failed, stale = failed[:0], stale[:0]
		resp, _, err := c.roundTrip(ctx, req, -1)
		if err != nil {
			return err
		}
		for _, t := range resp.(*protocol.ListOffsetsResponse).Topics {
			for _, p := range t.Partitions {
				tp := topicPartition{t.Name, int(p.PartitionIndex)}
				if p.ErrorCode != 0 {
					// A lag nobody samples is a lag nobody bounds: say so,
					// and re-read metadata when it is stale. (A new leader
					// answers OFFSET_NOT_AVAILABLE until its high watermark
					// reaches its epoch's start, KIP-207: nothing to refresh.)
					kerr := Error(p.ErrorCode)
					failed = append(failed, fmt.Sprintf("%s: %v", tp, kerr))
					switch kerr {
					case NotLeaderForPartition, FencedLeaderEpoch, UnknownLeaderEpoch, UnknownTopicOrPartition:
						if len(stale) == 0 || stale[len(stale)-1] != t.Name {
							stale = append(stale, t.Name)
						}
					}
					continue
				}
				if p.Offset >= 0 {
					hws[tp] = p.Offset
				}
			}
		}
		return nil
	})
	if err == nil && len(failed) > 0 {
		if len(stale) > 0 {
			if rerr := s.rt.Refresh(ctx, stale...); rerr != nil {
				failed = append(failed, fmt.Sprintf("refreshing metadata: %v", rerr))
			}
		}
		err = fmt.Errorf("partition errors: %s", strings.Join(failed, "; "))
	}
	return hws, err
}

// rackCheck feeds the rack check's detector (internal/consumer) of a share of Readers
// (engineShare: one check for all, keyed by broker and partition) with
// what the fetchers and the engine's dials see, and reports each cause it
// finds once per share, at Warn through ErrorLogger (else Logger, else
// slog.Default()): a Reader asked to read in its rack that cannot is a
// configuration fault costing cross-rack traffic, which belongs where
// faults are watched, not among the Logger's routine lines (which many
// programs drop), and is never silent.
type rackCheck struct {
	mu       sync.Mutex
	d        *consumer.RackDetector // made at first use, when the Reader has a rack
	metaSeen uint64                 // the metadata version racks is from (0: none)
	racks    map[int]string
	asked    time.Time // when the detector last had metadata re-read
}

// detector returns the detector, making it; rc.mu must be held.
func (rc *rackCheck) detector(rack string) *consumer.RackDetector {
	if rc.d == nil {
		rc.d = consumer.NewRackDetector(rack)
	}
	return rc.d
}

// rackDialed tells the check the Fetch versions of a broker the share's
// engine dialed.
func (s *engineShare) rackDialed(id int, c *Conn) {
	rack := s.key.rack
	if rack == "" {
		return
	}
	vs, err := c.apiVersions()
	if err != nil {
		return // the engine fails the fetch and dials again
	}
	rc := &s.rack
	rc.mu.Lock()
	found := rc.detector(rack).Versions(time.Now(), id, vs[protocol.Fetch].Max)
	rc.mu.Unlock()
	reportRackInactive(s.anyMember(), rack, rackInactive(found))
}

// FollowerFetch reports whether broker serves a consumer's fetch as a
// follower (routing.FetchVersions): not when it was seen supporting Fetch
// only below v11. A broker not dialed yet is taken to serve.
func (s *engineShare) FollowerFetch(broker int) bool {
	rc := &s.rack
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.d == nil || !rc.d.FetchTooOld(broker)
}

// rackFetched tells the check how broker answered a fetch of f's partition
// (preferred: the preferred read replica it named).
func (r *Reader) rackFetched(ctx context.Context, f *fetcher, broker, preferred int, rackSent bool) {
	if r.config.Rack == "" {
		return
	}
	now := f.now()
	// The latest metadata, no older than metaAt.
	metaAt := r.share.rt.Refreshed()
	p, ok := r.cluster.partition(f.tp.topic, f.tp.partition)
	if !ok {
		p = f.meta
	}
	rc := r.rack
	rc.mu.Lock()
	d := rc.detector(r.config.Rack)
	if v := r.share.rt.Version(); v != rc.metaSeen || rc.racks == nil {
		rc.metaSeen, rc.racks = v, r.cluster.brokerRacks()
	}
	// On every fetch: the detector keeps neither slice, so they stay on the
	// stack for the usual replication factors.
	var ids [8]int
	found, refresh := d.Brokers(now, rc.racks, brokerIDs(ids[:0], p.Replicas)), false
	if found == nil {
		b, ok := f.broker(broker)
		if !ok {
			b = Broker{ID: broker}
		}
		var isr [8]consumer.Replica
		found, refresh = d.Answered(consumer.RackAnswer{Now: now, Broker: broker, Rack: withRack(b, rc.racks).Rack,
			Topic: p.Topic, Partition: p.ID, Leader: rackReplica(p.Leader, rc.racks), ISR: rackReplicas(isr[:0], p.Isr, rc.racks),
			RackSent: rackSent, Preferred: preferred, MetaAt: metaAt})
		refresh = refresh && now.Sub(rc.asked) >= consumer.RackSilentWindow
		if refresh {
			rc.asked = now
		}
	}
	rc.mu.Unlock()
	r.rackReport(rackInactive(found))
	if refresh {
		// Once per window at most; a failure is retried by the next one.
		f.release()
		_ = r.refreshMetadata(ctx, f.tp.topic)
	}
}

// rackReport logs a cause found.
func (r *Reader) rackReport(found *RackInactive) {
	reportRackInactive(r, r.config.Rack, found)
}

// reportRackInactive logs a cause found of rack-aware fetching being
// inactive for the Readers of rack, at Warn: through r's ErrorLogger, else
// its Logger, else (no Logger given, or no Reader left) slog.Default().
func reportRackInactive(r *Reader, rack string, found *RackInactive) {
	if found == nil {
		return
	}
	var l Logger
	if r != nil {
		l = r.config.ErrorLogger
		if l == nil {
			l = r.config.Logger
		}
	}
	if l == nil {
		l = &SlogAdapter{Level: slog.LevelWarn} // slog.Default() when it logs
	}
	logEventTo(l, slog.LevelWarn, "kafka reader: rack-aware fetching is inactive", []slog.Attr{
		slog.String("rack", rack), slog.String("cause", string(found.Cause)),
		slog.Any("brokers", found.Brokers), slog.String("detail", found.Detail),
	}, "kafka reader: %s", found)
}

// rackStatus returns the causes found so far, in the order found.
func (r *Reader) rackStatus() []RackInactive {
	rc := r.rack
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.d == nil {
		return nil
	}
	var out []RackInactive
	for _, f := range rc.d.Found() {
		out = append(out, *rackInactive(&f))
	}
	return out
}

// rackInactive is a finding of the rack check as the API reports it.
func rackInactive(f *consumer.Finding) *RackInactive {
	if f == nil {
		return nil
	}
	return &RackInactive{Cause: RackInactiveCause(f.Cause), Brokers: f.Brokers, Detail: f.Detail, Since: f.Since}
}

// withRack fills in b's rack from racks when metadata left it out (a
// broker the answer did not list).
func withRack(b Broker, racks map[int]string) Broker {
	if b.Rack == "" {
		b.Rack = racks[b.ID]
	}
	return b
}

// rackReplica is b as the rack check sees it, its rack filled in from racks.
func rackReplica(b Broker, racks map[int]string) consumer.Replica {
	return consumer.Replica{ID: b.ID, Rack: withRack(b, racks).Rack}
}

// rackReplicas appends bs to out as the rack check sees them.
func rackReplicas(out []consumer.Replica, bs []Broker, racks map[int]string) []consumer.Replica {
	for _, b := range bs {
		out = append(out, rackReplica(b, racks))
	}
	return out
}

// brokerIDs appends the IDs of bs to out.
func brokerIDs(out []int, bs []Broker) []int {
	for _, b := range bs {
		out = append(out, b.ID)
	}
	return out
}
