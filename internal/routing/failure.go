package routing

// Failure is what a failed fetch says, as the caller classified its error:
// the routing package knows no error types (the kafka package's
// routeFailure builds it from kafka.Error codes).
type Failure struct {
	// Scope is what a follower's failure is evidence against.
	Scope Scope
	// Canceled: the fetcher gave up (its context ended); nobody failed.
	Canceled bool
	// OutOfRange: OFFSET_OUT_OF_RANGE. The leader's is the Reader's to
	// reset; a follower's may only mean it has not replicated the offset
	// yet (lag.go).
	OutOfRange bool
	// Refresh says whether the partition's metadata may have changed.
	Refresh Refresh
	// ReplicaAhead: FENCED_LEADER_EPOCH, the replica knows a newer leader
	// epoch than the request carried. Only fresh metadata helps; the
	// leader would refuse the old epoch too, so it never counts against
	// the replica however often it repeats while metadata catches up.
	ReplicaAhead bool
	// Unreachable: the broker gave no answer in time (the fetch stalled
	// or timed out): with a failed dial, what makes a leader unreachable
	// (leaderpath.go).
	Unreachable bool
}

// Scope says what a follower's failure blames.
type Scope int

const (
	// ScopeBroker: the broker, for every partition (the dial, the
	// connection, a timeout, a stall, KAFKA_STORAGE_ERROR).
	ScopeBroker Scope = iota
	// ScopePartition: the replica of this one partition (a Kafka error
	// about the partition, corrupt records).
	ScopePartition
	// ScopeStaleClient: the client's view (epoch, leadership) is old
	// (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER).
	ScopeStaleClient
)

// Refresh says whether a failure suggests the partition's metadata changed
// (leadership, replica placement, epochs).
type Refresh int

const (
	// RefreshNo: an error that says nothing about metadata.
	RefreshNo Refresh = iota
	// RefreshYes: a Kafka error about leadership, placement or epochs.
	RefreshYes
	// RefreshFromLeader: not a Kafka error (a disconnect, a transport
	// timeout): it counts only from the leader, whose going away often
	// means an election.
	RefreshFromLeader
)
