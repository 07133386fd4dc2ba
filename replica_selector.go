package kafka

import "time"

// The routing state machine of rack-aware fetching (KIP-392).
//
// One replicaSelector exists per partition a Reader fetches. It does no I/O:
// the fetcher reports what happened (an event) and asks where to fetch next
// (a decision). Switches happen only between batches, because the fetcher
// only asks between batches.
//
// THIS FILE IS A SKELETON: the API below is fixed; the implementation is
// being written (issue 5).

// routeEventKind says what happened to the partition's last fetch.
type routeEventKind int

const (
	// eventFetched: a fetch answered without a partition error.
	// Preferred is the response's preferred read replica (-1: none);
	// Empty and HighWatermark describe the records returned.
	eventFetched routeEventKind = iota
	// eventFetchError: the broker answered with a partition error, or the
	// request failed (timeout, disconnect). Err holds it.
	eventFetchError
	// eventDialFailed: the broker could not be reached.
	eventDialFailed
	// eventMetadata: new metadata for the partition arrived (Partition).
	eventMetadata
	// eventTick: time passed (TTL expiry is checked on every event too).
	eventTick
)

// routeEvent is one input of the state machine.
type routeEvent struct {
	Kind   routeEventKind
	Broker int       // the broker the event concerns (the one fetched from)
	Now    time.Time // the caller's clock, so tests control time

	Preferred     int   // eventFetched: preferred read replica, -1 for none
	Empty         bool  // eventFetched: no records returned
	FetchOffset   int64 // eventFetched: the offset fetched
	HighWatermark int64 // eventFetched: the responding replica's high watermark

	Err error // eventFetchError, eventDialFailed

	Partition Partition // eventMetadata: the partition's current metadata
}

// routeReason names why reads moved; it labels stats and log lines.
type routeReason string

const (
	reasonPreferred       routeReason = "preferred replica"
	reasonTTL             routeReason = "preference expired"
	reasonFollowerFailed  routeReason = "follower failed"
	reasonFollowerGone    routeReason = "follower left the ISR"
	reasonUnknownReplica  routeReason = "preferred replica not in metadata or ISR"
	reasonLeaderChanged   routeReason = "leader changed"
	reasonLeaderPreferred routeReason = "leader named no preference"
)

// routeDecision is the state machine's output: where and when to fetch next.
type routeDecision struct {
	Broker int // broker id to fetch from next (the leader or a follower)

	// Changed is set when Broker differs from the previous decision;
	// Reason says why. The fetcher logs one line per change.
	Changed bool
	Reason  routeReason

	// RefreshMetadata asks the fetcher to reload the partition's metadata
	// (and report it back as eventMetadata) before the next fetch.
	RefreshMetadata bool

	// ValidateOffset asks the fetcher to check its position with
	// OffsetForLeaderEpoch at the leader (KIP-320) before fetching: the
	// leader changed or an epoch was fenced.
	ValidateOffset bool

	// Backoff is how long to wait before the next fetch (a follower behind
	// the fetch offset answers at once with nothing; an error backs off).
	Backoff time.Duration
}

// routingConfig holds the Reader's routing settings.
type routingConfig struct {
	Rack string // the client's rack; empty disables follower fetching

	// PreferenceTTL bounds how long a preferred replica is used before
	// the leader is asked again (default 5 minutes).
	PreferenceTTL time.Duration

	// Cooldown is how long a failed replica is not used (default 5 minutes).
	Cooldown time.Duration

	// MaxSwitchesPerMinute damps flapping: a partition changes replica at
	// most this often, whatever the brokers say (default 4).
	MaxSwitchesPerMinute int

	// FollowerBackoffMin/Max bound the wait when a follower has nothing yet
	// above the fetch offset (defaults 50ms, 1s).
	FollowerBackoffMin, FollowerBackoffMax time.Duration
}

// replicaSelector routes one partition's fetches.
type replicaSelector struct {
	cfg      routingConfig
	cooldown *cooldownCache // shared by every partition of a Reader
	// (state fields to be defined by the implementation)
}

// newReplicaSelector starts routing partition p at its leader.
func newReplicaSelector(cfg routingConfig, cooldown *cooldownCache, p Partition, now time.Time) *replicaSelector {
	panic("not implemented yet")
}

// next folds ev into the state and returns where to fetch next.
func (s *replicaSelector) next(ev routeEvent) routeDecision {
	panic("not implemented yet")
}

// current returns the broker the partition is routed to now.
func (s *replicaSelector) current() int { panic("not implemented yet") }
