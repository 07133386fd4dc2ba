package routing

// The failures of the tables, named after the kafka.Error codes whose
// classification they are (the kafka package's TestRouteFailure checks
// that each code is classified so).
var (
	stale = Failure{Scope: ScopeStaleClient, Refresh: RefreshYes}

	NotLeaderForPartition = stale
	NotLeaderOrFollower   = stale
	FencedLeaderEpoch     = Failure{Scope: ScopeStaleClient, Refresh: RefreshYes, ReplicaAhead: true}
	UnknownLeaderEpoch    = stale

	OffsetOutOfRange         = Failure{Scope: ScopePartition, OutOfRange: true}
	ReplicaNotAvailable      = Failure{Scope: ScopePartition, Refresh: RefreshYes}
	UnknownTopicOrPartition  = Failure{Scope: ScopePartition, Refresh: RefreshYes}
	LeaderNotAvailable       = Failure{Scope: ScopePartition, Refresh: RefreshYes}
	TopicAuthorizationFailed = Failure{Scope: ScopePartition}
	KafkaStorageError        = Failure{Scope: ScopeBroker, Refresh: RefreshYes}
	RequestTimedOut          = Failure{Scope: ScopeBroker, Unreachable: true}

	// corruptRecords: a record batch failing its CRC (not a Kafka error).
	corruptRecords = Failure{Scope: ScopePartition, Refresh: RefreshFromLeader}
	// connLost: EOF, a reset, a refused dial, a transport timeout.
	connLost = Failure{Scope: ScopeBroker, Refresh: RefreshFromLeader}
	// canceled: the fetcher's context ended.
	canceled = Failure{Scope: ScopeBroker, Canceled: true, Refresh: RefreshFromLeader}
)
