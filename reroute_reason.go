package kafka

// RerouteReason says why a partition's reads moved from one broker to
// another. Its values are the keys of PartitionRouting.Reroutes (Stats) and
// of the RoutingStats reroute maps, and the reason of routing log lines.
// The list may grow: code that reads the maps should not assume it is
// closed.
type RerouteReason string

// The reasons reads move. Each is the string value the stats always used
// (the unexported names of replica_selector.go are the same constants).
const (
	// ReroutePreferredReplica: the leader named an in-sync replica in the
	// client's rack ("preferred replica").
	ReroutePreferredReplica RerouteReason = reasonPreferred
	// RerouteTTL: RackPreferenceTTL passed, reads went back to the leader
	// to ask again ("preference expired").
	RerouteTTL RerouteReason = reasonTTL
	// RerouteFollowerFailed: the follower failed (dial, connection, stall,
	// a partition error) or cools down ("follower failed").
	RerouteFollowerFailed RerouteReason = reasonFollowerFailed
	// RerouteFollowerGone: metadata shows the follower out of the ISR,
	// offline or unknown ("follower left the ISR").
	RerouteFollowerGone RerouteReason = reasonFollowerGone
	// RerouteUnknownReplica: the replica the leader named is not in the
	// client's metadata or ISR ("preferred replica not in metadata or ISR").
	RerouteUnknownReplica RerouteReason = reasonUnknownReplica
	// RerouteLeaderChanged: another broker leads the partition ("leader
	// changed").
	RerouteLeaderChanged RerouteReason = reasonLeaderChanged
	// RerouteLeaderPreferred: the leader, asked again, named no replica
	// ("leader named no preference").
	RerouteLeaderPreferred RerouteReason = reasonLeaderPreferred
	// RerouteCoolingDown: the replica the leader named cools down after a
	// failure ("preferred replica cooling down").
	RerouteCoolingDown RerouteReason = reasonCoolingDown
	// RerouteFlapDamped: the partition moved to a follower too often in the
	// last minute ("replica switch budget used up").
	RerouteFlapDamped RerouteReason = reasonFlapDamped
	// RerouteLeaderError: the leader failed ("leader failed").
	RerouteLeaderError RerouteReason = reasonLeaderError
	// RerouteStaleClient: a follower said the client's metadata is stale
	// ("client metadata stale").
	RerouteStaleClient RerouteReason = reasonStaleClient
	// RerouteClientChoice: the leader named no replica and the Reader's
	// ReplicaSelector picked one ("client-selected replica").
	RerouteClientChoice RerouteReason = reasonClientChoice
	// RerouteFollowerLagging: the Reader waited at the follower longer than
	// MaxFollowerLag for records the leader had ("follower lagging").
	RerouteFollowerLagging RerouteReason = reasonFollowerLagging
)

// RerouteReasons returns every reason the Reader may report, for
// collectors that create their series up front (a counter that exists at
// 0 before its first increment gives rate() a start).
func RerouteReasons() []RerouteReason {
	// A reason added to replica_selector.go belongs here too.
	return []RerouteReason{
		ReroutePreferredReplica, RerouteTTL, RerouteFollowerFailed, RerouteFollowerGone,
		RerouteUnknownReplica, RerouteLeaderChanged, RerouteLeaderPreferred,
		RerouteCoolingDown, RerouteFlapDamped, RerouteLeaderError, RerouteStaleClient,
		RerouteClientChoice, RerouteFollowerLagging,
	}
}
