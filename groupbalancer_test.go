package kafka

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strconv"
	"testing"
)

var allGroupBalancers = []GroupBalancer{
	RangeGroupBalancer{},
	RoundRobinGroupBalancer{},
	RackAffinityGroupBalancer{},
}

func makeTopicPartitions(topic string, n int) []Partition {
	ps := make([]Partition, n)
	for i := range ps {
		ps[i] = Partition{Topic: topic, ID: i}
	}
	return ps
}

func concatPartitions(lists ...[]Partition) []Partition {
	var out []Partition
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func newGroupMember(id string, topics ...string) GroupMember {
	return GroupMember{ID: id, Topics: topics}
}

func TestFindGroupBalancer(t *testing.T) {
	balancers := []GroupBalancer{RoundRobinGroupBalancer{}, RackAffinityGroupBalancer{Rack: "r1"}, RangeGroupBalancer{}}
	for _, name := range []string{"range", "roundrobin", "rack-affinity"} {
		b, ok := findGroupBalancer(name, balancers)
		if !ok || b.ProtocolName() != name {
			t.Errorf("%q: got %v, %v", name, b, ok)
		}
	}
	if b, ok := findGroupBalancer("rack-affinity", balancers); !ok || b.(RackAffinityGroupBalancer).Rack != "r1" {
		t.Errorf("got %#v, want the configured balancer", b)
	}
	if b, ok := findGroupBalancer("sticky", balancers); ok || b != nil {
		t.Errorf("sticky: got %v, %v", b, ok)
	}
	if _, ok := findGroupBalancer("range", nil); ok {
		t.Error("found a balancer in an empty list")
	}
}

func TestGroupBalancerProtocol(t *testing.T) {
	tests := []struct {
		b        GroupBalancer
		name     string
		userData []byte
	}{
		{RangeGroupBalancer{}, "range", nil},
		{RoundRobinGroupBalancer{}, "roundrobin", nil},
		{RackAffinityGroupBalancer{}, "rack-affinity", []byte{}},
		{RackAffinityGroupBalancer{Rack: "us-east-1a"}, "rack-affinity", []byte("us-east-1a")},
	}
	for _, tt := range tests {
		if got := tt.b.ProtocolName(); got != tt.name {
			t.Errorf("%T: ProtocolName() = %q, want %q", tt.b, got, tt.name)
		}
		data, err := tt.b.UserData()
		if err != nil || !reflect.DeepEqual(data, tt.userData) {
			t.Errorf("%T: UserData() = %q, %v; want %q", tt.b, data, err, tt.userData)
		}
	}
}

func TestRangeGroupBalancer(t *testing.T) {
	tests := []struct {
		name       string
		members    []GroupMember
		partitions []Partition
		want       GroupMemberAssignments
	}{
		{
			name: "empty",
			want: GroupMemberAssignments{},
		},
		{
			name:       "5 partitions, 2 members",
			members:    []GroupMember{newGroupMember("c1", "t"), newGroupMember("c0", "t")},
			partitions: makeTopicPartitions("t", 5),
			want: GroupMemberAssignments{
				"c0": {"t": {0, 1, 2}},
				"c1": {"t": {3, 4}},
			},
		},
		{
			name:       "6 partitions, 3 members",
			members:    []GroupMember{newGroupMember("c2", "t"), newGroupMember("c0", "t"), newGroupMember("c1", "t")},
			partitions: makeTopicPartitions("t", 6),
			want: GroupMemberAssignments{
				"c0": {"t": {0, 1}},
				"c1": {"t": {2, 3}},
				"c2": {"t": {4, 5}},
			},
		},
		{
			name:       "more members than partitions",
			members:    []GroupMember{newGroupMember("a", "t"), newGroupMember("b", "t"), newGroupMember("c", "t")},
			partitions: makeTopicPartitions("t", 2),
			want: GroupMemberAssignments{
				"a": {"t": {0}},
				"b": {"t": {1}},
				"c": {},
			},
		},
		{
			name:       "different topics",
			members:    []GroupMember{newGroupMember("a", "t1", "t2"), newGroupMember("b", "t2", "t3")},
			partitions: concatPartitions(makeTopicPartitions("t1", 3), makeTopicPartitions("t2", 3), makeTopicPartitions("t3", 3), makeTopicPartitions("other", 2)),
			want: GroupMemberAssignments{
				"a": {"t1": {0, 1, 2}, "t2": {0, 1}},
				"b": {"t2": {2}, "t3": {0, 1, 2}},
			},
		},
		{
			name:    "unsorted and repeated input",
			members: []GroupMember{newGroupMember("b", "t", "t"), newGroupMember("a", "t"), newGroupMember("b", "t")},
			partitions: []Partition{
				{Topic: "t", ID: 3}, {Topic: "t", ID: 0}, {Topic: "t", ID: 2},
				{Topic: "t", ID: 1}, {Topic: "t", ID: 3}, {Topic: "t", ID: 4},
			},
			want: GroupMemberAssignments{
				"a": {"t": {0, 1, 2}},
				"b": {"t": {3, 4}},
			},
		},
		{
			name:       "no partitions, no topics",
			members:    []GroupMember{newGroupMember("a", "missing"), newGroupMember("b")},
			partitions: makeTopicPartitions("t", 3),
			want:       GroupMemberAssignments{"a": {}, "b": {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RangeGroupBalancer{}.AssignGroups(tt.members, tt.partitions)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestRoundRobinGroupBalancer(t *testing.T) {
	tests := []struct {
		name       string
		members    []GroupMember
		partitions []Partition
		want       GroupMemberAssignments
	}{
		{
			name: "empty",
			want: GroupMemberAssignments{},
		},
		{
			name:       "5 partitions, 2 members",
			members:    []GroupMember{newGroupMember("c1", "t"), newGroupMember("c0", "t")},
			partitions: makeTopicPartitions("t", 5),
			want: GroupMemberAssignments{
				"c0": {"t": {0, 2, 4}},
				"c1": {"t": {1, 3}},
			},
		},
		{
			name:       "6 partitions, 3 members",
			members:    []GroupMember{newGroupMember("c2", "t"), newGroupMember("c0", "t"), newGroupMember("c1", "t")},
			partitions: makeTopicPartitions("t", 6),
			want: GroupMemberAssignments{
				"c0": {"t": {0, 3}},
				"c1": {"t": {1, 4}},
				"c2": {"t": {2, 5}},
			},
		},
		{
			// The deal carries on from one topic to the next.
			name:       "one partition per topic",
			members:    []GroupMember{newGroupMember("a", "t1", "t2", "t3"), newGroupMember("b", "t1", "t2", "t3"), newGroupMember("c", "t1", "t2", "t3")},
			partitions: concatPartitions(makeTopicPartitions("t1", 1), makeTopicPartitions("t2", 1), makeTopicPartitions("t3", 2)),
			want: GroupMemberAssignments{
				"a": {"t1": {0}, "t3": {1}},
				"b": {"t2": {0}},
				"c": {"t3": {0}},
			},
		},
		{
			// t1: a a a (b skipped); t2: b a b; t3: b b b (a skipped).
			name:       "different topics",
			members:    []GroupMember{newGroupMember("b", "t2", "t3"), newGroupMember("a", "t1", "t2")},
			partitions: concatPartitions(makeTopicPartitions("t3", 3), makeTopicPartitions("t2", 3), makeTopicPartitions("t1", 3), makeTopicPartitions("other", 2)),
			want: GroupMemberAssignments{
				"a": {"t1": {0, 1, 2}, "t2": {1}},
				"b": {"t2": {0, 2}, "t3": {0, 1, 2}},
			},
		},
		{
			name:       "no partitions, no topics",
			members:    []GroupMember{newGroupMember("a", "missing"), newGroupMember("b")},
			partitions: makeTopicPartitions("t", 3),
			want:       GroupMemberAssignments{"a": {}, "b": {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RoundRobinGroupBalancer{}.AssignGroups(tt.members, tt.partitions)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

// checkGroupAssignment verifies the invariants every balancer keeps: each member
// has an entry; each partition of a subscribed topic goes to exactly one
// subscriber; nothing else is assigned; lists are sorted. With balanced, each
// topic's subscribers also get the same count give or take one.
func checkGroupAssignment(t *testing.T, got GroupMemberAssignments, members []GroupMember, partitions []Partition, balanced bool) {
	t.Helper()
	subscribed := map[string]map[string]bool{} // topic -> member IDs
	for _, m := range members {
		if _, ok := got[m.ID]; !ok {
			t.Errorf("member %s missing", m.ID)
		}
		for _, topic := range m.Topics {
			if subscribed[topic] == nil {
				subscribed[topic] = map[string]bool{}
			}
			subscribed[topic][m.ID] = true
		}
	}
	owner := map[string]string{}
	counts := map[string]map[string]int{} // topic -> member -> count
	for id, topics := range got {
		for topic, ids := range topics {
			if len(ids) == 0 {
				t.Errorf("member %s has an empty list for %s", id, topic)
			}
			if !sort.IntsAreSorted(ids) {
				t.Errorf("member %s, topic %s: unsorted %v", id, topic, ids)
			}
			if !subscribed[topic][id] {
				t.Errorf("member %s got %s without subscribing", id, topic)
			}
			for _, p := range ids {
				key := topic + "/" + strconv.Itoa(p)
				if prev, dup := owner[key]; dup {
					t.Errorf("%s assigned to both %s and %s", key, prev, id)
				}
				owner[key] = id
			}
			if counts[topic] == nil {
				counts[topic] = map[string]int{}
			}
			counts[topic][id] = len(ids)
		}
	}
	want := map[string]bool{}
	for _, p := range partitions {
		if len(subscribed[p.Topic]) > 0 {
			want[p.Topic+"/"+strconv.Itoa(p.ID)] = true
		}
	}
	for key := range want {
		if _, ok := owner[key]; !ok {
			t.Errorf("%s not assigned", key)
		}
	}
	for key := range owner {
		if !want[key] {
			t.Errorf("%s assigned but does not exist", key)
		}
	}
	if !balanced {
		return
	}
	for topic, subs := range subscribed {
		min, max := -1, 0
		for id := range subs {
			n := counts[topic][id]
			if min < 0 || n < min {
				min = n
			}
			if n > max {
				max = n
			}
		}
		if max-min > 1 {
			t.Errorf("topic %s unbalanced: %v", topic, counts[topic])
		}
	}
}

// randomGroupLayout builds a group where members subscribe to random subsets of
// topics and partitions have random leaders and in-sync replicas in a few
// racks; some members and brokers have no rack.
func randomGroupLayout(r *rand.Rand) ([]GroupMember, []Partition) {
	racks := []string{"", "a", "b", "c", "d"}
	topics := []string{"t0", "t1", "t2", "t3"}
	var members []GroupMember
	for i, n := 0, 1+r.Intn(8); i < n; i++ {
		m := GroupMember{ID: fmt.Sprintf("m%02d", r.Intn(100)), UserData: []byte(racks[r.Intn(len(racks))])}
		for _, topic := range topics {
			if r.Intn(2) == 0 {
				m.Topics = append(m.Topics, topic)
			}
		}
		members = append(members, m)
	}
	var partitions []Partition
	for _, topic := range topics {
		for id, n := 0, r.Intn(20); id < n; id++ {
			p := Partition{Topic: topic, ID: id, Leader: Broker{ID: r.Intn(6), Rack: racks[r.Intn(len(racks))]}}
			p.Isr = append(p.Isr, p.Leader)
			for j := r.Intn(3); j > 0; j-- {
				p.Isr = append(p.Isr, Broker{ID: r.Intn(6), Rack: racks[r.Intn(len(racks))]})
			}
			partitions = append(partitions, p)
		}
	}
	return members, partitions
}

func TestGroupBalancersInvariants(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 300; i++ {
		members, partitions := randomGroupLayout(r)
		// Deduplicate member IDs the way the balancers do, for checking.
		seen := map[string]bool{}
		var unique []GroupMember
		for _, m := range members {
			if !seen[m.ID] {
				seen[m.ID] = true
				unique = append(unique, m)
			}
		}
		for _, b := range allGroupBalancers {
			got := b.AssignGroups(members, partitions)
			// Round-robin only balances per topic when all members
			// subscribe to the same topics.
			_, rr := b.(RoundRobinGroupBalancer)
			checkGroupAssignment(t, got, unique, partitions, !rr)

			// The input order does not matter.
			shuffledM := append([]GroupMember(nil), unique...)
			shuffledP := append([]Partition(nil), partitions...)
			r.Shuffle(len(shuffledM), func(i, j int) { shuffledM[i], shuffledM[j] = shuffledM[j], shuffledM[i] })
			r.Shuffle(len(shuffledP), func(i, j int) { shuffledP[i], shuffledP[j] = shuffledP[j], shuffledP[i] })
			if again := b.AssignGroups(shuffledM, shuffledP); !reflect.DeepEqual(again, got) {
				t.Fatalf("%s: shuffled input changed the assignment:\n%v\n%v", b.ProtocolName(), got, again)
			}
			if t.Failed() {
				t.Fatalf("%s failed on members %v partitions %v", b.ProtocolName(), members, partitions)
			}
		}
	}
}

func TestGroupBalancersUneven(t *testing.T) {
	// 213 partitions over 66 members: 3 or 4 each (15 members get 4).
	var members []GroupMember
	for i := 0; i < 66; i++ {
		members = append(members, GroupMember{ID: strconv.Itoa(i), Topics: []string{"t"}, UserData: []byte{byte('a' + i%3)}})
	}
	partitions := makeTopicPartitions("t", 213)
	for i := range partitions {
		partitions[i].Leader = Broker{ID: i % 5, Rack: string(rune('a' + i%5))}
	}
	for _, b := range allGroupBalancers {
		got := b.AssignGroups(members, partitions)
		checkGroupAssignment(t, got, members, partitions, true)
		fours := 0
		for _, m := range members {
			switch n := len(got[m.ID]["t"]); n {
			case 3:
			case 4:
				fours++
			default:
				t.Errorf("%s: member %s got %d partitions", b.ProtocolName(), m.ID, n)
			}
		}
		if fours != 213%66 {
			t.Errorf("%s: %d members got 4 partitions, want %d", b.ProtocolName(), fours, 213%66)
		}
	}

	// Every topic balanced with all members subscribed to all topics, and
	// round-robin also balances the total.
	members = []GroupMember{newGroupMember("a", "x", "y"), newGroupMember("b", "x", "y"), newGroupMember("c", "x", "y")}
	partitions = concatPartitions(makeTopicPartitions("x", 4), makeTopicPartitions("y", 4))
	got := RoundRobinGroupBalancer{}.AssignGroups(members, partitions)
	checkGroupAssignment(t, got, members, partitions, false)
	for _, m := range members {
		if n := len(got[m.ID]["x"]) + len(got[m.ID]["y"]); n < 2 || n > 3 {
			t.Errorf("roundrobin: member %s got %d partitions in total", m.ID, n)
		}
	}
}

// rackMember is a member of the rack-affinity tests, subscribed to "t".
func rackMember(id, rack string) GroupMember {
	return GroupMember{ID: id, Topics: []string{"t"}, UserData: []byte(rack)}
}

// rackPartition is partition id of "t" led by a broker in leader's rack, with
// in-sync followers in the followers' racks.
func rackPartition(id int, leader string, followers ...string) Partition {
	p := Partition{Topic: "t", ID: id, Leader: Broker{ID: 100 + id, Rack: leader}}
	p.Isr = []Broker{p.Leader}
	for i, rack := range followers {
		p.Isr = append(p.Isr, Broker{ID: 200 + 10*id + i, Rack: rack})
	}
	p.Replicas = p.Isr
	return p
}

// locality counts the assigned partitions that are in the member's rack
// through their leader, and through an in-sync follower only.
func rackLocality(got GroupMemberAssignments, members []GroupMember, partitions []Partition) (leader, follower int) {
	rack := map[string]string{}
	for _, m := range members {
		rack[m.ID] = string(m.UserData)
	}
	byID := map[string]Partition{}
	for _, p := range partitions {
		byID[p.Topic+"/"+strconv.Itoa(p.ID)] = p
	}
	for id, topics := range got {
		for topic, ids := range topics {
			for _, pid := range ids {
				l, f := isRackLocal(byID[topic+"/"+strconv.Itoa(pid)], rack[id])
				if l {
					leader++
				} else if f {
					follower++
				}
			}
		}
	}
	return leader, follower
}

func isRackLocal(p Partition, rack string) (viaLeader, viaFollower bool) {
	if rack == "" {
		return false, false
	}
	if p.Leader.Rack == rack {
		return true, false
	}
	for _, b := range p.Isr {
		if b.Rack == rack {
			return false, true
		}
	}
	return false, false
}

func TestRackAffinityGroupBalancer(t *testing.T) {
	tests := []struct {
		name       string
		members    []GroupMember
		partitions []Partition
		want       GroupMemberAssignments
		leader     int // partitions local through their leader
		follower   int // partitions local through a follower only
	}{
		{
			name:    "leaders spread over the racks",
			members: []GroupMember{rackMember("m1", "b"), rackMember("m2", "a"), rackMember("m3", "c")},
			partitions: []Partition{
				rackPartition(0, "a"), rackPartition(1, "b"), rackPartition(2, "c"),
				rackPartition(3, "a"), rackPartition(4, "b"), rackPartition(5, "c"),
			},
			want: GroupMemberAssignments{
				"m1": {"t": {1, 4}},
				"m2": {"t": {0, 3}},
				"m3": {"t": {2, 5}},
			},
			leader: 6,
		},
		{
			// All leaders in rack a: leader affinity alone could keep
			// only two partitions local; in-sync followers in b and c
			// make all six local.
			name:    "followers in the member's rack",
			members: []GroupMember{rackMember("ma", "a"), rackMember("mb", "b"), rackMember("mc", "c")},
			partitions: []Partition{
				rackPartition(0, "a", "b"), rackPartition(1, "a", "b"),
				rackPartition(2, "a", "c"), rackPartition(3, "a", "c"),
				rackPartition(4, "a", "b", "c"), rackPartition(5, "a", "b", "c"),
			},
			want: GroupMemberAssignments{
				"ma": {"t": {0, 1}},
				"mb": {"t": {4, 5}},
				"mc": {"t": {2, 3}},
			},
			leader: 2, follower: 4,
		},
		{
			// Both partitions are local to both members; each gets the
			// one it leads, though ID order would pair them the other way.
			name:       "leader preferred over follower",
			members:    []GroupMember{rackMember("x", "b"), rackMember("y", "a")},
			partitions: []Partition{rackPartition(0, "a", "b"), rackPartition(1, "b", "a")},
			want: GroupMemberAssignments{
				"x": {"t": {1}},
				"y": {"t": {0}},
			},
			leader: 2,
		},
		{
			// Balance first: rack b's member takes two remote partitions.
			name:       "balance before locality",
			members:    []GroupMember{rackMember("ma", "a"), rackMember("mb", "b")},
			partitions: []Partition{rackPartition(0, "a"), rackPartition(1, "a"), rackPartition(2, "a"), rackPartition(3, "a")},
			want: GroupMemberAssignments{
				"ma": {"t": {0, 1}},
				"mb": {"t": {2, 3}},
			},
			leader: 2,
		},
		{
			// 5 over 3: two members get two. Rack c leads three, so
			// its member takes two of them and another member one.
			name:       "extra partitions stay local where possible",
			members:    []GroupMember{rackMember("m1", "a"), rackMember("m2", "b"), rackMember("m3", "c")},
			partitions: []Partition{rackPartition(0, "a"), rackPartition(1, "c"), rackPartition(2, "c"), rackPartition(3, "b"), rackPartition(4, "c")},
			want: GroupMemberAssignments{
				"m1": {"t": {0, 4}},
				"m2": {"t": {3}},
				"m3": {"t": {1, 2}},
			},
			leader: 4,
		},
		{
			// An unknown rack matches nothing, not even brokers without
			// a rack.
			name:       "unknown racks",
			members:    []GroupMember{rackMember("m1", ""), rackMember("m2", "a")},
			partitions: []Partition{rackPartition(0, ""), rackPartition(1, ""), rackPartition(2, "a"), rackPartition(3, "")},
			want: GroupMemberAssignments{
				"m1": {"t": {0, 1}},
				"m2": {"t": {2, 3}},
			},
			leader: 1,
		},
		{
			name:       "no member in the leaders' racks",
			members:    []GroupMember{rackMember("m1", "z"), rackMember("m2", "z")},
			partitions: []Partition{rackPartition(0, "a"), rackPartition(1, "b"), rackPartition(2, "a", "z")},
			want: GroupMemberAssignments{
				"m1": {"t": {0, 1}},
				"m2": {"t": {2}},
			},
			follower: 1,
		},
		{
			name:    "more members than partitions",
			members: []GroupMember{rackMember("m1", "a"), rackMember("m2", "b"), rackMember("m3", "b")},
			partitions: []Partition{
				rackPartition(0, "b"), rackPartition(1, "b"),
			},
			want: GroupMemberAssignments{
				"m1": {},
				"m2": {"t": {0}},
				"m3": {"t": {1}},
			},
			leader: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RackAffinityGroupBalancer{}.AssignGroups(tt.members, tt.partitions)
			checkGroupAssignment(t, got, tt.members, tt.partitions, true)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
			if l, f := rackLocality(got, tt.members, tt.partitions); l != tt.leader || f != tt.follower {
				t.Errorf("local through leader %d, through follower %d; want %d, %d", l, f, tt.leader, tt.follower)
			}
		})
	}
}

func TestRackAffinityGroupBalancerRackCounts(t *testing.T) {
	// Larger groups, described by how many members and partition leaders
	// each rack has; want is how many partitions stay local.
	tests := []struct {
		name       string
		members    map[string]int
		leaders    map[string]int
		followers  bool // each partition also has in-sync followers in the two next racks
		wantLocal  int
		wantLeader int
	}{
		{"even", map[string]int{"a": 3, "b": 3, "c": 3}, map[string]int{"a": 20, "b": 19, "c": 20}, false, 59, 59},
		{"skewed partitions", map[string]int{"a": 1, "b": 1, "c": 1}, map[string]int{"a": 7, "c": 7}, false, 10, 10},
		{"skewed members", map[string]int{"a": 5, "b": 3, "c": 1}, map[string]int{"a": 9, "b": 9, "c": 9}, false, 21, 21},
		{"skewed, with followers", map[string]int{"a": 5, "b": 3, "c": 1}, map[string]int{"a": 9, "b": 9, "c": 9}, true, 27, 21},
		{"no member in the racks", map[string]int{"z": 10}, map[string]int{"a": 20, "c": 19}, false, 0, 0},
		{"unknown member racks", map[string]int{"": 2, "a": 1}, map[string]int{"a": 6, "": 3}, false, 3, 3},
	}
	racks := []string{"a", "b", "c"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var members []GroupMember
			for _, rack := range []string{"", "a", "b", "c", "z"} {
				for i := 0; i < tt.members[rack]; i++ {
					members = append(members, rackMember(fmt.Sprintf("%s-%d", rack, i), rack))
				}
			}
			var partitions []Partition
			for ri, rack := range append([]string{""}, racks...) {
				for i := 0; i < tt.leaders[rack]; i++ {
					var followers []string
					if tt.followers && ri > 0 {
						followers = []string{racks[ri%3], racks[(ri+1)%3]}
					}
					partitions = append(partitions, rackPartition(len(partitions), rack, followers...))
				}
			}
			got := RackAffinityGroupBalancer{}.AssignGroups(members, partitions)
			checkGroupAssignment(t, got, members, partitions, true)
			l, f := rackLocality(got, members, partitions)
			if l+f != tt.wantLocal || l != tt.wantLeader {
				t.Errorf("local %d (through leader %d), want %d (%d)", l+f, l, tt.wantLocal, tt.wantLeader)
			}
		})
	}
}

// TestRackAffinityGroupBalancerOptimal compares the balancer with an
// exhaustive search on small groups: among balanced assignments, it must keep
// the most partitions local, and then the most local through their leader.
func TestRackAffinityGroupBalancerOptimal(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	racks := []string{"", "a", "b", "c"}
	for iter := 0; iter < 400; iter++ {
		nm, np := 1+r.Intn(4), r.Intn(8)
		var members []GroupMember
		for i := 0; i < nm; i++ {
			members = append(members, rackMember("m"+strconv.Itoa(i), racks[r.Intn(len(racks))]))
		}
		var partitions []Partition
		for i := 0; i < np; i++ {
			var followers []string
			for j := r.Intn(3); j > 0; j-- {
				followers = append(followers, racks[r.Intn(len(racks))])
			}
			partitions = append(partitions, rackPartition(i, racks[r.Intn(len(racks))], followers...))
		}

		got := RackAffinityGroupBalancer{}.AssignGroups(members, partitions)
		checkGroupAssignment(t, got, members, partitions, true)
		l, f := rackLocality(got, members, partitions)

		bestLocal, bestLeader := exhaustiveBest(members, partitions)
		if l+f != bestLocal || l != bestLeader {
			t.Fatalf("members %v partitions %v: got %v with %d local (%d via leader); best is %d (%d)",
				members, partitions, got, l+f, l, bestLocal, bestLeader)
		}
	}
}

func exhaustiveBest(members []GroupMember, partitions []Partition) (bestLocal, bestLeader int) {
	nm, np := len(members), len(partitions)
	per, extra := np/nm, np%nm
	owner := make([]int, np)
	count := make([]int, nm)
	var walk func(i int)
	walk = func(i int) {
		if i == np {
			big := 0
			for _, c := range count {
				if c == per+1 {
					big++
				}
			}
			if big != extra {
				return
			}
			local, leader := 0, 0
			for pi, mi := range owner {
				l, f := isRackLocal(partitions[pi], string(members[mi].UserData))
				if l || f {
					local++
				}
				if l {
					leader++
				}
			}
			if local > bestLocal || local == bestLocal && leader > bestLeader {
				bestLocal, bestLeader = local, leader
			}
			return
		}
		for mi := 0; mi < nm; mi++ {
			if count[mi] == per+1 || count[mi] == per && extra == 0 {
				continue
			}
			owner[i] = mi
			count[mi]++
			walk(i + 1)
			count[mi]--
		}
	}
	walk(0)
	return bestLocal, bestLeader
}

func TestRackAffinityGroupBalancerSpreadsExtras(t *testing.T) {
	// Three single-partition topics over three members without racks:
	// each topic's one partition is that topic's "extra", and each goes to
	// a different member.
	members := []GroupMember{newGroupMember("a", "x", "y", "z"), newGroupMember("b", "x", "y", "z"), newGroupMember("c", "x", "y", "z")}
	partitions := concatPartitions(makeTopicPartitions("x", 1), makeTopicPartitions("y", 1), makeTopicPartitions("z", 1))
	got := RackAffinityGroupBalancer{}.AssignGroups(members, partitions)
	want := GroupMemberAssignments{
		"a": {"x": {0}},
		"b": {"y": {0}},
		"c": {"z": {0}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}

	// Different topics per member, as in a group with mixed subscriptions.
	members = []GroupMember{
		{ID: "m1", Topics: []string{"t1", "t2"}, UserData: []byte("a")},
		{ID: "m2", Topics: []string{"t2", "t3"}, UserData: []byte("b")},
		{ID: "m3", Topics: []string{"t3", "t1"}, UserData: []byte("c")},
	}
	partitions = []Partition{
		{Topic: "t1", ID: 1, Leader: Broker{ID: 1, Rack: "a"}},
		{Topic: "t1", ID: 2, Leader: Broker{ID: 3, Rack: "c"}},
		{Topic: "t2", ID: 1, Leader: Broker{ID: 1, Rack: "a"}},
		{Topic: "t2", ID: 2, Leader: Broker{ID: 2, Rack: "b"}},
		{Topic: "t3", ID: 1, Leader: Broker{ID: 3, Rack: "c"}},
		{Topic: "t3", ID: 2, Leader: Broker{ID: 2, Rack: "b"}},
	}
	got = RackAffinityGroupBalancer{}.AssignGroups(members, partitions)
	want = GroupMemberAssignments{
		"m1": {"t1": {1}, "t2": {1}},
		"m2": {"t2": {2}, "t3": {2}},
		"m3": {"t1": {2}, "t3": {1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func BenchmarkRackAffinityGroupBalancer(b *testing.B) {
	var members []GroupMember
	for i := 0; i < 300; i++ {
		members = append(members, GroupMember{ID: fmt.Sprintf("m%03d", i), Topics: []string{"t"}, UserData: []byte{byte('a' + i%3)}})
	}
	var partitions []Partition
	for i := 0; i < 3000; i++ {
		partitions = append(partitions, rackPartition(i, string(rune('a'+i%4)), string(rune('a'+(i+1)%4)), string(rune('a'+(i+2)%4))))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		RackAffinityGroupBalancer{}.AssignGroups(members, partitions)
	}
}
