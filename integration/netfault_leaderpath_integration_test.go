package integration

import (
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/testing/netfault"
	"github.com/stretchr/testify/assert"
)

// TestNetFaultLeaderPath black-holes the client's path to the rack-b
// broker for 30 s while it LEADS a third of the topic's partitions (and
// follows the rest). It stays leader and in every ISR (the brokers
// replicate over their own listener), so metadata keeps naming it: the
// partitions it leads are read from an in-sync follower meanwhile
// (leader_unreachable), those it follows from their leaders, and all come
// back to it once a probe reaches it. Figures: NETFAULTFIGURE lines.
func TestNetFaultLeaderPath(t *testing.T) {
	n := startNFRunOn(t, nfLeaderPathAssignments)

	bh := n.apply("leaderpath-blackhole", netfault.Fault{Blackhole: true}, 30*time.Second)
	rr := n.r.RoutingStats().Reroutes
	figs := n.finish()

	assert.True(t, bh.leftOK, "reads still on broker %d after 30 s of black hole", n.b)
	assert.Positive(t, rr[kafka.RerouteLeaderUnreachable], "no partition left its unreachable leader")
	assert.LessOrEqual(t, figs["leaderpath-blackhole"].gap, nfBound, "longest delivery gap in the black hole (partition %d)", figs["leaderpath-blackhole"].gapP)
	assert.True(t, bh.backOK, "reads not back on broker %d within %v of its path healing", n.b, nfBackWait)
	assert.LessOrEqual(t, bh.back, nfBound, "reads back on the leader's choice (broker %d) after its path healed", n.b)
}

// nfLeaderPathAssignments: partitions 0 and 3 led by the rack-b broker,
// the others by racks a and c with the rack-b broker following.
func nfLeaderPathAssignments(a, b, c int) []kafka.ReplicaAssignment {
	out := make([]kafka.ReplicaAssignment, rkPartitions)
	for p := range out {
		r := [][]int{{b, a, c}, {a, b, c}, {c, b, a}}[p%3]
		out[p] = kafka.ReplicaAssignment{Partition: p, Replicas: r}
	}
	return out
}
