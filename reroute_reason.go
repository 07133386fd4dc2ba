package kafka

import "github.com/rackfetch/kafka-go/internal/routing"

// RerouteReason says why a partition's reads moved from one broker to
// another. Its values are the keys of PartitionRouting.Reroutes (Stats) and
// of the RoutingStats reroute maps, and the reason of routing log lines.
// The list may grow: code that reads the maps should not assume it is
// closed.
type RerouteReason string

// The reasons reads move. Each is the string value the stats always used
// (internal/routing names the same values).
const (
	// ReroutePreferredReplica: the leader named an in-sync replica in the
	// client's rack ("preferred replica").
	ReroutePreferredReplica RerouteReason = RerouteReason(routing.ReasonPreferred)
	// RerouteTTL: RackPreferenceTTL passed, reads went back to the leader
	// to ask again ("preference expired").
	RerouteTTL RerouteReason = RerouteReason(routing.ReasonTTL)
	// RerouteFollowerFailed: the follower failed (dial, connection, stall,
	// a partition error) or cools down ("follower failed").
	RerouteFollowerFailed RerouteReason = RerouteReason(routing.ReasonFollowerFailed)
	// RerouteFollowerGone: metadata shows the follower out of the ISR,
	// offline or unknown ("follower left the ISR").
	RerouteFollowerGone RerouteReason = RerouteReason(routing.ReasonFollowerGone)
	// RerouteUnknownReplica: the replica the leader named is not in the
	// client's metadata or ISR ("preferred replica not in metadata or ISR").
	RerouteUnknownReplica RerouteReason = RerouteReason(routing.ReasonUnknownReplica)
	// RerouteLeaderChanged: another broker leads the partition ("leader
	// changed").
	RerouteLeaderChanged RerouteReason = RerouteReason(routing.ReasonLeaderChanged)
	// RerouteLeaderPreferred: the leader, asked again, named no replica
	// ("leader named no preference").
	RerouteLeaderPreferred RerouteReason = RerouteReason(routing.ReasonLeaderPreferred)
	// RerouteCoolingDown: the replica the leader named cools down after a
	// failure ("preferred replica cooling down").
	RerouteCoolingDown RerouteReason = RerouteReason(routing.ReasonCoolingDown)
	// RerouteFlapDamped: the partition moved to a follower too often in the
	// last minute ("replica switch budget used up").
	RerouteFlapDamped RerouteReason = RerouteReason(routing.ReasonFlapDamped)
	// RerouteLeaderError: the leader failed ("leader failed").
	RerouteLeaderError RerouteReason = RerouteReason(routing.ReasonLeaderError)
	// RerouteStaleClient: a follower said the client's metadata is stale
	// ("client metadata stale").
	RerouteStaleClient RerouteReason = RerouteReason(routing.ReasonStaleClient)
	// RerouteClientChoice: the leader named no replica and the Reader's
	// ReplicaSelector picked one ("client-selected replica").
	RerouteClientChoice RerouteReason = RerouteReason(routing.ReasonClientChoice)
	// RerouteFollowerLagging: the Reader waited at the follower longer than
	// MaxFollowerLag for records the leader had ("follower lagging").
	RerouteFollowerLagging RerouteReason = RerouteReason(routing.ReasonFollowerLagging)
)

// RerouteReasons returns every reason the Reader may report, for
// collectors that create their series up front (a counter that exists at
// 0 before its first increment gives rate() a start).
func RerouteReasons() []RerouteReason {
	// A reason added to internal/routing belongs here too.
	return []RerouteReason{
		ReroutePreferredReplica, RerouteTTL, RerouteFollowerFailed, RerouteFollowerGone,
		RerouteUnknownReplica, RerouteLeaderChanged, RerouteLeaderPreferred,
		RerouteCoolingDown, RerouteFlapDamped, RerouteLeaderError, RerouteStaleClient,
		RerouteClientChoice, RerouteFollowerLagging,
	}
}
