package kafka

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/internal/routing"
	"github.com/rackfetch/kafka-go/protocol"
)

// Replica selection: the public ReplicaSelector, and (further down) the
// Reader's adapter over the routing state machine that every fetcher asks.
//
// Client-side replica selection: for brokers without
// replica.selector.class, whose leaders never name a preferred replica. A
// broker serves a v11+ consumer fetch from any replica it hosts whatever its
// selector, so the Reader may pick the replica itself. The broker's choice,
// when its leader names one, always wins; the client's applies only when the
// leader names none. The choice enters the routing state machine
// (internal/routing) as a lease like the leader's, under the same rules:
// in-sync replicas only, cooldowns, the flap budget, the TTL after which the
// leader is asked again, leader changes and epochs; offsets are still
// resolved at the leader only.

// ReplicaSelector picks the replica a client in clientRack should read
// partition p from. p is the partition's metadata as the Reader last saw
// it, with Isr reduced to the replicas the Reader may read now (in sync,
// reachable, not cooling down after a failure). It returns the broker ID
// and true, or false to read from the leader. A broker outside that ISR is
// never read: the Reader reads from the leader instead.
type ReplicaSelector interface {
	SelectReplica(clientRack string, p Partition) (brokerID int, ok bool)
}

// RackAffinityReplicaSelector picks an in-sync replica in the client's
// rack: the leader when it is there, else one of the rack's in-sync
// replicas, the same one for a partition every time (by partition ID, so
// that the partitions of a topic spread over a rack's brokers). It returns
// false when the client has no rack or no in-sync replica is in it.
type RackAffinityReplicaSelector struct{}

// SelectReplica satisfies the ReplicaSelector interface.
func (RackAffinityReplicaSelector) SelectReplica(clientRack string, p Partition) (int, bool) {
	return routing.RackAffinity{}.Choose(clientRack, routingPartition(p))
}

// ReplicaToRead returns the broker a Conn should dial to read partition p
// from a client in clientRack: the replica sel picks (RackAffinityReplicaSelector
// when nil) if it is in p's ISR with an address and not offline, else the
// leader. Dial it with Dialer.RackID set (a follower serves only fetches
// that carry client metadata, Fetch v11+) and position the Conn with
// SeekDontCheck at an offset resolved at the leader: followers refuse
// ListOffsets.
func ReplicaToRead(sel ReplicaSelector, clientRack string, p Partition) Broker {
	if sel == nil {
		sel = RackAffinityReplicaSelector{}
	}
	view := routingPartition(p)
	if id, ok := routeChooser(sel).Choose(clientRack, routing.Readable(view, func(int) bool { return true })); ok && routing.InSync(&view, id) {
		for _, b := range p.Replicas {
			if b.ID == id && b.Host != "" {
				return b
			}
		}
	}
	return p.Leader
}

// routeChooser adapts sel to the router (nil: no client-side choice).
// RackAffinityReplicaSelector runs on the routing view itself: no
// conversion to a kafka.Partition each time it is asked.
func routeChooser(sel ReplicaSelector) routing.Chooser {
	switch sel.(type) {
	case nil:
		return nil
	case RackAffinityReplicaSelector:
		return routing.RackAffinity{}
	}
	return selectorChooser{sel}
}

// selectorChooser asks a ReplicaSelector of the application.
type selectorChooser struct{ sel ReplicaSelector }

func (c selectorChooser) Choose(clientRack string, p routing.Partition) (int, bool) {
	return c.sel.SelectReplica(clientRack, kafkaPartition(p))
}

// The routing state machine of rack-aware fetching (KIP-392) lives in
// internal/routing: its transition table is at the top of
// internal/routing/selector.go, the cooldowns, the client-side choice and
// the follower lag bound are in the same package, with their table tests.
// It owns every routing wait: the decision's Backoff is the only wait of a
// fetcher after an event. This file adapts it to the Reader: it converts a
// kafka.Partition into the routing view, classifies kafka errors into
// routing.Failure values, and keeps the kafka.Partition the router accepted,
// so that the fetcher reads its leader and epoch without a conversion per
// fetch.

// The events a fetcher reports (routing.EventKind).
const (
	eventFetched    = routing.EventFetched
	eventFetchError = routing.EventFetchError
	eventDialFailed = routing.EventDialFailed
	eventMetadata   = routing.EventMetadata
	eventLeaderHW   = routing.EventLeaderHW
)

// routeEvent is a routing event as the fetcher knows it: with the error of
// a failure and the kafka view of new metadata, both converted by next.
type routeEvent struct {
	routing.Event
	Err       error     // eventFetchError, eventDialFailed
	Partition Partition // eventMetadata
}

// routingConfig holds the Reader's routing settings (ReaderConfig.routing).
type routingConfig = routing.Config

// routeDecision is where and when to fetch next.
type routeDecision = routing.Decision

// routeReason labels stats and log lines; the values are RerouteReason's.
type routeReason = RerouteReason

// metadataEvent reports p, the partition's metadata as the cache has it.
func metadataEvent(broker int, now time.Time, p Partition) routeEvent {
	return routeEvent{Event: routing.Event{Kind: eventMetadata, Broker: broker, Now: now}, Partition: p}
}

// failureEvent reports a failed dial (kind eventDialFailed) or fetch.
func failureEvent(kind routing.EventKind, broker int, now time.Time, err error, offset int64) routeEvent {
	return routeEvent{Event: routing.Event{Kind: kind, Broker: broker, Now: now, FetchOffset: offset}, Err: err}
}

// leaderHWEvent reports the leader's high watermark hw, read at at
// (reader_runtime.go).
func leaderHWEvent(leader int, at time.Time, hw int64) routeEvent {
	return routeEvent{Event: routing.Event{Kind: eventLeaderHW, Broker: leader, Now: at, HighWatermark: hw}}
}

// replicaSelector routes one partition's fetches: routing.Selector with
// the kafka view of the metadata it accepted.
type replicaSelector struct {
	rs       *routing.Selector
	part     Partition // the kafka.Partition of rs.Partition()
	accepted uint64    // rs.Accepted() when part was set
}

// newReplicaSelector starts routing partition p at its leader.
func newReplicaSelector(cfg routingConfig, cooldown *cooldownCache, p Partition, now time.Time) *replicaSelector {
	return &replicaSelector{rs: routing.New(cfg, cooldown, routingPartition(p), now), part: p}
}

// current returns the broker the partition is routed to now.
func (s *replicaSelector) current() int { return s.rs.Current() }

// standIn reports whether an in-sync follower would take over should the
// leader become unreachable now (internal/routing/leaderpath.go).
func (s *replicaSelector) standIn(now time.Time) bool { return s.rs.HasStandIn(now) }

// quiet reports until when only fetch answers or metadata can move the
// partition's reads (routing.Selector.Quiet).
func (s *replicaSelector) quiet(now time.Time) (time.Time, bool) { return s.rs.Quiet(now) }

// partition returns the partition's metadata as the router accepted it:
// the one view of leader, epoch and ISR the fetcher acts on.
func (s *replicaSelector) partition() Partition { return s.part }

// next folds ev into the router's state and returns where to fetch next.
func (s *replicaSelector) next(ev routeEvent) routeDecision {
	e := ev.Event
	switch e.Kind {
	case eventMetadata:
		e.Partition = routingPartition(ev.Partition)
	case eventFetchError, eventDialFailed:
		e.Failure = routeFailure(ev.Err)
	}
	d := s.rs.Next(e)
	if n := s.rs.Accepted(); n != s.accepted {
		s.accepted, s.part = n, ev.Partition
	}
	if t := routeTrace.Load(); t != nil {
		(*t)(s.part.Topic, s.part.ID, e, d)
	}
	return d
}

// routeTrace, when set (by tests only), sees every routing event and the
// decision it led to: the refusals that move nothing leave no log line.
var routeTrace atomic.Pointer[func(topic string, partition int, ev routing.Event, d routing.Decision)]

// routeFailure classifies a failed fetch for the router: what a follower's
// failure blames, and whether metadata may have changed. The kafka package
// classifies because only it knows its error codes; the router gets plain
// values it can be tested with.
func routeFailure(err error) routing.Failure {
	f := routing.Failure{
		Canceled:   errors.Is(err, context.Canceled),
		OutOfRange: errors.Is(err, OffsetOutOfRange),
		// No answer in time: a stall (RequestTimedOut, see Conn.fail) or
		// the request's own deadline.
		Unreachable: errors.Is(err, RequestTimedOut) || errors.Is(err, context.DeadlineExceeded),
	}
	var kerr Error
	if !errors.As(err, &kerr) {
		// The connection, a timeout, a stall, corrupt records: a going
		// away of the leader often means an election.
		f.Refresh = routing.RefreshFromLeader
		f.Scope = routing.ScopeBroker
		var rbe *protocol.RecordBatchError
		if errors.As(err, &rbe) {
			f.Scope = routing.ScopePartition // this replica's copy
		}
		return f
	}
	switch kerr {
	case FencedLeaderEpoch, UnknownLeaderEpoch, NotLeaderForPartition:
		f.Scope = routing.ScopeStaleClient
		f.ReplicaAhead = kerr == FencedLeaderEpoch
	case KafkaStorageError, RequestTimedOut:
		f.Scope = routing.ScopeBroker
	default:
		f.Scope = routing.ScopePartition
	}
	switch kerr {
	case NotLeaderForPartition, LeaderNotAvailable, FencedLeaderEpoch, UnknownLeaderEpoch,
		UnknownTopicOrPartition, UnknownTopicID, InconsistentTopicID, ReplicaNotAvailable, KafkaStorageError:
		f.Refresh = routing.RefreshYes
	}
	return f
}

// routingPartition is the routing view of p (one allocation per replica
// list: done per metadata event, not per fetch).
func routingPartition(p Partition) routing.Partition {
	return routing.Partition{
		Topic: p.Topic, ID: p.ID,
		Leader: routing.Replica(p.Leader), LeaderEpoch: p.LeaderEpoch,
		Replicas: routingReplicas(p.Replicas), Isr: routingReplicas(p.Isr), OfflineReplicas: routingReplicas(p.OfflineReplicas),
	}
}

func routingReplicas(bs []Broker) []routing.Replica {
	if bs == nil {
		return nil
	}
	out := make([]routing.Replica, len(bs))
	for i, b := range bs {
		out[i] = routing.Replica(b)
	}
	return out
}

// kafkaPartition is the kafka.Partition of a routing view, for a
// ReplicaSelector.
func kafkaPartition(p routing.Partition) Partition {
	return Partition{
		Topic: p.Topic, ID: p.ID,
		Leader: Broker(p.Leader), LeaderEpoch: p.LeaderEpoch,
		Replicas: kafkaBrokers(p.Replicas), Isr: kafkaBrokers(p.Isr), OfflineReplicas: kafkaBrokers(p.OfflineReplicas),
	}
}

func kafkaBrokers(rs []routing.Replica) []Broker {
	if rs == nil {
		return nil
	}
	out := make([]Broker, len(rs))
	for i, r := range rs {
		out[i] = Broker(r)
	}
	return out
}
