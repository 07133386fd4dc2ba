package kafka

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/internal/routing"
	"github.com/rackfetch/kafka-go/protocol"
)

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
