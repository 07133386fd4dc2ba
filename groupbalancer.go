package kafka

import (
	"fmt"
	"slices"
	"sort"

	"github.com/rackfetch/kafka-go/internal/group"
)

// GroupMember describes a single participant in a consumer group.
type GroupMember struct {
	// ID is the unique ID for this member as taken from the JoinGroup response.
	ID string

	// Topics is a list of topics that this member is consuming.
	Topics []string

	// UserData contains any information that the GroupBalancer sent to the
	// consumer group coordinator.
	UserData []byte
}

// GroupMemberAssignments holds MemberID => topic => partitions.
type GroupMemberAssignments map[string]map[string][]int

// GroupBalancer encapsulates the client side rebalancing logic.
//
// Every member of a group advertises the balancers it supports; the
// coordinator picks a protocol all members share, and the member elected group
// leader runs that balancer's AssignGroups for the whole group.
type GroupBalancer interface {
	// ProtocolName of the GroupBalancer, as advertised in JoinGroup.
	ProtocolName() string

	// UserData lets the balancer attach data to this member's JoinGroup
	// metadata; the leader sees it as GroupMember.UserData.
	UserData() ([]byte, error)

	// AssignGroups decides which members consume which partitions. Every
	// partition of a topic that some member subscribes to is assigned to
	// exactly one of the members subscribed to that topic.
	AssignGroups(members []GroupMember, partitions []Partition) GroupMemberAssignments
}

// RangeGroupBalancer assigns each topic's partitions to its subscribers in
// contiguous ranges, topic by topic. Members are ordered by ID; when the
// partitions do not divide evenly, the first members get one more.
//
// Example: 5 partitions, 2 consumers
//
//	C0: [0, 1, 2]
//	C1: [3, 4]
//
// Example: 6 partitions, 3 consumers
//
//	C0: [0, 1]
//	C1: [2, 3]
//	C2: [4, 5]
type RangeGroupBalancer struct{}

// ProtocolName returns "range".
func (r RangeGroupBalancer) ProtocolName() string { return "range" }

// UserData returns no data.
func (r RangeGroupBalancer) UserData() ([]byte, error) { return nil, nil }

// AssignGroups satisfies the GroupBalancer interface.
func (r RangeGroupBalancer) AssignGroups(members []GroupMember, partitions []Partition) GroupMemberAssignments {
	g := newGroupLayout(members, partitions)
	for _, topic := range g.topics {
		subs := g.subscribers[topic]
		ids := g.partitionIDs(topic)
		per, extra := len(ids)/len(subs), len(ids)%len(subs)
		for i, m := range subs {
			n := per
			if i < extra {
				n++
			}
			g.assign(m.ID, topic, ids[:n]...)
			ids = ids[n:]
		}
	}
	return g.result
}

// RoundRobinGroupBalancer deals partitions out to members one at a time, like
// cards. All subscribed partitions are dealt in order of topic then partition,
// to members in order of ID, skipping members not subscribed to the topic of
// the partition being dealt, so the deal carries on across topics.
//
// Example: 5 partitions, 2 consumers
//
//	C0: [0, 2, 4]
//	C1: [1, 3]
//
// Example: 6 partitions, 3 consumers
//
//	C0: [0, 3]
//	C1: [1, 4]
//	C2: [2, 5]
type RoundRobinGroupBalancer struct{}

// ProtocolName returns "roundrobin".
func (r RoundRobinGroupBalancer) ProtocolName() string { return "roundrobin" }

// UserData returns no data.
func (r RoundRobinGroupBalancer) UserData() ([]byte, error) { return nil, nil }

// AssignGroups satisfies the GroupBalancer interface.
func (r RoundRobinGroupBalancer) AssignGroups(members []GroupMember, partitions []Partition) GroupMemberAssignments {
	g := newGroupLayout(members, partitions)
	next := 0 // index in g.members of the next member to deal to
	for _, topic := range g.topics {
		for _, id := range g.partitionIDs(topic) {
			// Some member subscribes to topic, so this terminates.
			for !g.members[next].subscribes(topic) {
				next = (next + 1) % len(g.members)
			}
			g.assign(g.members[next].ID, topic, id)
			next = (next + 1) % len(g.members)
		}
	}
	return g.result
}

// RackAffinityGroupBalancer assigns partitions preferably to members in the
// same rack as a replica they can fetch from, which cuts latency and, where
// traffic between racks is billed (such as across availability zones), cost.
//
// Each member sends its Rack in its UserData. A partition is local to a member
// when the partition's leader is in the member's rack, or when one of its
// in-sync replicas is: with follower fetching (KIP-392, a broker configured
// with a rack-aware replica selector) the member then reads from that replica
// rather than from the remote leader.
//
// Balance comes first: for each topic every subscriber gets the same number of
// partitions, give or take one. Within that constraint the number of local
// partitions is maximized. Among equally local assignments, the members that
// get one extra partition of a topic are the ones with the fewest partitions
// of the topics assigned before it (in name order), to even out totals; then
// leaders are preferred over followers. Members and partitions without rack
// information are never local.
//
// Racks come from the brokers' metadata, which carries them since Kafka
// 0.10.0.0.
type RackAffinityGroupBalancer struct {
	// Rack is the name of the rack where this consumer is running.  It will be
	// communicated to the consumer group leader via the UserData so that
	// assignments can be made with affinity to the partition's replicas.
	Rack string
}

// ProtocolName returns "rack-affinity".
func (r RackAffinityGroupBalancer) ProtocolName() string { return "rack-affinity" }

// UserData returns the bytes of Rack, unframed, the encoding of
// segmentio/kafka-go, so both can share a group.
func (r RackAffinityGroupBalancer) UserData() ([]byte, error) { return []byte(r.Rack), nil }

// AssignGroups satisfies the GroupBalancer interface.
func (r RackAffinityGroupBalancer) AssignGroups(members []GroupMember, partitions []Partition) GroupMemberAssignments {
	g := newGroupLayout(members, partitions)
	load := make(map[string]int, len(g.members)) // partitions assigned so far, all topics
	for _, topic := range g.topics {
		for id, parts := range assignRackAffinity(g.subscribers[topic], g.partitions[topic], load) {
			g.assign(id, topic, parts...)
			load[id] += len(parts)
		}
	}
	return g.result
}

// findGroupBalancer returns the balancer of balancers whose ProtocolName is
// protocolName: the leader of a group uses it to run the protocol that the
// coordinator chose.
func findGroupBalancer(protocolName string, balancers []GroupBalancer) (GroupBalancer, bool) {
	for _, b := range balancers {
		if b.ProtocolName() == protocolName {
			return b, true
		}
	}
	return nil, false
}

// groupLayout is the normalized input of an assignment: members deduplicated
// by ID and sorted, topics deduplicated, partitions deduplicated and sorted,
// so that every balancer is deterministic whatever the input order.
type groupLayout struct {
	members     []groupMember
	topics      []string                 // sorted; only those with a subscriber
	subscribers map[string][]groupMember // by topic, sorted by ID
	partitions  map[string][]Partition   // by topic, sorted by ID
	result      GroupMemberAssignments
}

type groupMember struct {
	GroupMember
	topics map[string]bool
}

func (m groupMember) subscribes(topic string) bool { return m.topics[topic] }

func newGroupLayout(members []GroupMember, partitions []Partition) *groupLayout {
	g := &groupLayout{
		subscribers: make(map[string][]groupMember),
		partitions:  make(map[string][]Partition),
		result:      make(GroupMemberAssignments, len(members)),
	}

	for _, m := range members {
		if _, dup := g.result[m.ID]; dup {
			continue
		}
		// Every member gets an entry, even with nothing assigned: each
		// one needs an assignment in SyncGroup.
		g.result[m.ID] = make(map[string][]int)
		gm := groupMember{GroupMember: m, topics: make(map[string]bool, len(m.Topics))}
		for _, t := range m.Topics {
			gm.topics[t] = true
		}
		g.members = append(g.members, gm)
	}
	sort.SliceStable(g.members, func(i, j int) bool { return g.members[i].ID < g.members[j].ID })

	for _, m := range g.members {
		for t := range m.topics {
			if len(g.subscribers[t]) == 0 {
				g.topics = append(g.topics, t)
			}
			g.subscribers[t] = append(g.subscribers[t], m) // in ID order, like g.members
		}
	}
	sort.Strings(g.topics)

	for _, p := range partitions {
		if len(g.subscribers[p.Topic]) > 0 {
			g.partitions[p.Topic] = append(g.partitions[p.Topic], p)
		}
	}
	for t, ps := range g.partitions {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
		// Drop repeated partitions, keeping the first seen of each.
		out := ps[:0]
		for i, p := range ps {
			if i == 0 || p.ID != out[len(out)-1].ID {
				out = append(out, p)
			}
		}
		g.partitions[t] = out
	}
	return g
}

func (g *groupLayout) partitionIDs(topic string) []int {
	ps := g.partitions[topic]
	ids := make([]int, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

// assign adds partitions of topic to member; lists stay sorted.
func (g *groupLayout) assign(member, topic string, partitions ...int) {
	if len(partitions) == 0 {
		return
	}
	ps := append(g.result[member][topic], partitions...)
	sort.Ints(ps)
	g.result[member][topic] = ps
}

// assignRackAffinity splits one topic's partitions among its subscribers, as
// documented on RackAffinityGroupBalancer, and returns member ID => partitions.
//
// It is a min-cost flow problem. Partitions that are local to the same racks
// in the same way are interchangeable, and so are members with the same rack
// and load rank; grouping both keeps the network small whatever the size of
// the group:
//
//	source -> partition class -> rack -> member group -> sink   (local)
//	source -> partition class -> anywhere -> member group -> sink (remote)
//
// Each member takes per units to the sink plus at most one more through a
// shared "extra" node of capacity len(partitions) % len(members), which holds
// the count balanced. Costs, by decreasing weight: a remote partition; an
// extra partition for a member by the rank of its load so far (equal loads
// rank the same); a local partition reached through a follower instead of the
// leader. Each weight exceeds the largest total of the lighter costs.
func assignRackAffinity(members []groupMember, partitions []Partition, load map[string]int) map[string][]int {
	out := make(map[string][]int, len(members))
	if len(partitions) == 0 {
		return out
	}
	nm, np := len(members), len(partitions)
	per, extra := np/nm, np%nm

	// Racks of the members. An empty one is unknown: it is left out of
	// rackIndex, so it never matches a broker without a rack either.
	rackIndex := map[string]int{}
	var racks []string
	for _, m := range members {
		if r := string(m.UserData); r != "" {
			if _, ok := rackIndex[r]; !ok {
				rackIndex[r] = len(racks)
				racks = append(racks, r)
			}
		}
	}

	// Members that get an extra partition should be the least loaded ones:
	// rank them by load so far, equal loads ranking the same so that other
	// preferences decide between them.
	var levels []int // distinct loads, ascending
	for _, m := range members {
		levels = append(levels, load[m.ID])
	}
	sort.Ints(levels)
	levels = slices.Compact(levels)

	type memberGroup struct {
		rack, rank int // rack -1: unknown
		members    []string
	}
	var groups []*memberGroup
	groupOf := map[[2]int]*memberGroup{}
	for _, m := range members {
		rack, ok := rackIndex[string(m.UserData)]
		if !ok {
			rack = -1
		}
		key := [2]int{rack, sort.SearchInts(levels, load[m.ID])}
		g := groupOf[key]
		if g == nil {
			g = &memberGroup{rack: key[0], rank: key[1]}
			groupOf[key] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, m.ID)
	}

	// Classes of partitions, in order of first appearance.
	type partitionClass struct {
		leader     int   // rack index of the leader, -1 when no member's
		followers  []int // rack indexes of in-sync followers, without leader's
		partitions []int
	}
	var classes []*partitionClass
	classOf := map[string]*partitionClass{}
	for _, p := range partitions {
		leader := -1
		if i, ok := rackIndex[p.Leader.Rack]; ok {
			leader = i
		}
		var followers []int
		for _, b := range p.Isr {
			if i, ok := rackIndex[b.Rack]; ok && i != leader {
				followers = append(followers, i)
			}
		}
		sort.Ints(followers)
		followers = slices.Compact(followers)
		key := fmt.Sprint(leader, followers)
		c := classOf[key]
		if c == nil {
			c = &partitionClass{leader: leader, followers: followers}
			classOf[key] = c
			classes = append(classes, c)
		}
		c.partitions = append(c.partitions, p.ID)
	}

	const followerCost = 1
	extraWeight := int64(np) + 1                                  // > total follower cost
	remoteCost := int64(nm)*int64(nm)*extraWeight + int64(np) + 1 // > all other costs

	const source, sink, extraNode, anywhere = 0, 1, 2, 3
	classNode := func(c int) int { return 4 + c }
	rackNode := func(r int) int { return 4 + len(classes) + r }
	groupNode := func(g int) int { return 4 + len(classes) + len(racks) + g }
	f := group.NewFlowNetwork(4 + len(classes) + len(racks) + len(groups))

	classOut := make([][]group.FlowArc, len(classes)) // to racks and anywhere
	for ci, c := range classes {
		n := len(c.partitions)
		f.AddEdge(source, classNode(ci), n, 0)
		if c.leader >= 0 {
			classOut[ci] = append(classOut[ci], f.AddEdge(classNode(ci), rackNode(c.leader), n, 0))
		}
		for _, r := range c.followers {
			classOut[ci] = append(classOut[ci], f.AddEdge(classNode(ci), rackNode(r), n, followerCost))
		}
		classOut[ci] = append(classOut[ci], f.AddEdge(classNode(ci), anywhere, n, remoteCost))
	}
	var groupIn []group.FlowArc // from racks and anywhere
	groupExtra := make([]group.FlowArc, len(groups))
	for gi, g := range groups {
		n := len(g.members)
		if g.rack >= 0 {
			groupIn = append(groupIn, f.AddEdge(rackNode(g.rack), groupNode(gi), n*(per+1), 0))
		}
		groupIn = append(groupIn, f.AddEdge(anywhere, groupNode(gi), n*(per+1), 0))
		if per > 0 {
			f.AddEdge(groupNode(gi), sink, n*per, 0)
		}
		if extra > 0 {
			groupExtra[gi] = f.AddEdge(groupNode(gi), extraNode, n, int64(g.rank)*extraWeight)
		}
	}
	if extra > 0 {
		f.AddEdge(extraNode, sink, extra, 0)
	}
	f.MinCostFlow(source, sink)

	// Decompose the flow into partitions per member. Rack, anywhere and
	// group nodes only pass flow through, so the units entering one can be
	// paired with those leaving it in any order; pairing them in order
	// keeps the result deterministic.
	seats := make([][]flowUnits, len(groups)) // member index in group, units
	for gi, g := range groups {
		extras := 0
		if extra > 0 {
			extras = f.Edge(groupExtra[gi]).Flow()
		}
		for i := range g.members {
			n := per
			if i < extras {
				n++
			}
			if n > 0 {
				seats[gi] = append(seats[gi], flowUnits{i, n})
			}
		}
	}
	arriving := make([][]flowUnits, f.Nodes()) // at rack or anywhere node: group, units
	for _, a := range groupIn {
		e := f.Edge(a)
		if n := e.Flow(); n > 0 {
			arriving[a.From] = append(arriving[a.From], flowUnits{e.To - groupNode(0), n})
		}
	}
	for ci, c := range classes {
		parts := c.partitions
		for _, a := range classOut[ci] {
			e := f.Edge(a)
			for n := e.Flow(); n > 0; {
				gi, m := takeUnits(&arriving[e.To], n)
				for k := m; k > 0; {
					i, s := takeUnits(&seats[gi], k)
					id := groups[gi].members[i]
					out[id] = append(out[id], parts[:s]...)
					parts = parts[s:]
					k -= s
				}
				n -= m
			}
		}
	}
	return out
}

// flowUnits is a number of units of flow bound for to.
type flowUnits struct{ to, n int }

// takeUnits takes up to n units from the head of queue and reports where
// they go and how many were taken. Flow conservation guarantees the queue is
// not empty.
func takeUnits(queue *[]flowUnits, n int) (to, taken int) {
	q := *queue
	to, taken = q[0].to, q[0].n
	if taken > n {
		taken = n
	}
	q[0].n -= taken
	if q[0].n == 0 {
		q = q[1:]
	}
	*queue = q
	return to, taken
}
