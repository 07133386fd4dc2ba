package kafka

import "github.com/rackfetch/kafka-go/internal/routing"

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
)

// rerouteSentences are the texts of the log lines; a reason added to
// internal/routing belongs here too (a test checks every one has a text).
var rerouteSentences = map[RerouteReason]string{
	ReroutePreferredReplica: "preferred replica",
	RerouteTTL:              "preference expired",
	RerouteFollowerFailed:   "follower failed",
	RerouteFollowerGone:     "follower left the ISR",
	RerouteUnknownReplica:   "preferred replica not in metadata or ISR",
	RerouteLeaderChanged:    "leader changed",
	RerouteLeaderPreferred:  "leader named no preference",
	RerouteCoolingDown:      "preferred replica cooling down",
	RerouteFlapDamped:       "replica switch budget used up",
	RerouteLeaderError:      "leader failed",
	RerouteStaleClient:      "client metadata stale",
	RerouteClientChoice:     "client-selected replica",
	RerouteFollowerLagging:  "follower lagging",
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
		RerouteClientChoice, RerouteFollowerLagging,
	}
}
