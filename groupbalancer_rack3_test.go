package kafka

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// With every partition replicated in every rack (RF 3 over
// racks a, b, c) every member is eligible for every partition; the
// rack-affinity balancer must still keep the load even and each member's
// reads in its own rack, whatever rack the leaders are in, and fall back to
// a plain even split when racks are unknown.

// rf3Partition is partition id of "t" led in rack leader, with in-sync
// replicas in all three racks.
func rf3Partition(id int, leader string) Partition {
	p := Partition{Topic: "t", ID: id}
	for i, rack := range []string{"a", "b", "c"} {
		b := Broker{ID: i + 1, Host: fmt.Sprintf("broker-%d", i+1), Port: 9092, Rack: rack}
		p.Replicas = append(p.Replicas, b)
		if rack == leader {
			p.Leader = b
		}
	}
	p.Isr = p.Replicas
	return p
}

func TestRackAffinityGroupBalancerRF3(t *testing.T) {
	members := []GroupMember{rackMember("ma", "a"), rackMember("mb", "b"), rackMember("mc", "c")}
	for _, leaders := range []string{"abcabc", "aaaaaa", "aaaabc", "aabbcc", "abcabcabc", "aaaaaaa"} {
		t.Run(leaders, func(t *testing.T) {
			var parts []Partition
			for i, r := range leaders {
				parts = append(parts, rf3Partition(i, string(r)))
			}
			got := RackAffinityGroupBalancer{}.AssignGroups(members, parts)
			checkGroupAssignment(t, got, members, parts, true)
			lead, follow := rackLocality(got, members, parts)
			assert.Equal(t, len(parts), lead+follow, "every partition local to its member: %v", got)
			// Reads through the leader wherever the even split allows.
			perRack := map[rune]int{}
			for _, r := range leaders {
				perRack[r]++
			}
			wantLead := 0
			for _, n := range perRack {
				wantLead += min(n, (len(parts)+len(members)-1)/len(members))
			}
			assert.GreaterOrEqual(t, lead, min(wantLead, len(parts)), "partitions read from an in-rack leader: %v", got)
		})
	}
}

// Each member reads its partitions from its own rack with the client-side
// selector: the assignment and the selector agree.
func TestRackAffinityGroupBalancerRF3WithSelector(t *testing.T) {
	members := []GroupMember{rackMember("ma", "a"), rackMember("mb", "b"), rackMember("mc", "c")}
	var parts []Partition
	for i, r := range "aaaabc" {
		parts = append(parts, rf3Partition(i, string(r)))
	}
	got := RackAffinityGroupBalancer{}.AssignGroups(members, parts)
	for _, m := range members {
		rack := string(m.UserData)
		assert.Len(t, got[m.ID]["t"], 2, "member %s", m.ID)
		for _, id := range got[m.ID]["t"] {
			b := ReplicaToRead(RackAffinityReplicaSelector{}, rack, parts[id])
			assert.Equal(t, rack, b.Rack, "member %s reads partition %d from broker %d", m.ID, id, b.ID)
		}
	}
}

// Without racks (members that send none, or brokers without broker.rack)
// nothing is local and only the balance counts: an even split, the range
// balancer's for one topic and members without racks. (Over several topics
// the extras go to the least loaded members, evener than range:
// TestRackAffinityGroupBalancerSpreadsExtras.)
func TestRackAffinityGroupBalancerUnknownRacks(t *testing.T) {
	for _, shape := range []struct{ members, partitions int }{{3, 6}, {3, 7}, {2, 5}, {4, 3}} {
		t.Run(fmt.Sprintf("%d members, %d partitions", shape.members, shape.partitions), func(t *testing.T) {
			var members, racked []GroupMember
			for i := 0; i < shape.members; i++ {
				members = append(members, rackMember(fmt.Sprintf("m%d", i), ""))
				racked = append(racked, rackMember(fmt.Sprintf("m%d", i), string(rune('a'+i%3))))
			}
			var parts, noRack []Partition
			for i := 0; i < shape.partitions; i++ {
				parts = append(parts, rf3Partition(i, string(rune('a'+i%3))))
				noRack = append(noRack, rackPartition(i, ""))
			}
			got := RackAffinityGroupBalancer{}.AssignGroups(members, parts)
			checkGroupAssignment(t, got, members, parts, true)
			assert.Equal(t, RangeGroupBalancer{}.AssignGroups(members, parts), got, "members without racks")
			got = RackAffinityGroupBalancer{}.AssignGroups(racked, noRack)
			checkGroupAssignment(t, got, racked, noRack, true)
			lead, follow := rackLocality(got, racked, noRack)
			assert.Zero(t, lead+follow, "brokers without racks: nothing is local")
		})
	}
}
