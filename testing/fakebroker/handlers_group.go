package fakebroker

import (
	"fmt"
	"slices"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// The group coordinator is a small version of Kafka's classic protocol:
// one rebalance at a time; JoinGroup answers once every member has
// rejoined (members that do not within the rebalance timeout are dropped);
// the leader's SyncGroup hands out the assignments. Sessions never expire.

type groupState int

const (
	groupEmpty groupState = iota
	groupPreparing
	groupCompleting
	groupStable
)

type group struct {
	id           string
	state        groupState
	generation   int32
	protocolType string
	protocolName string
	leader       string
	members      map[string]*member
	order        []string // member ids in join order
	pending      map[string]bool
	rebalance    *rebalance // the join round under way or last completed
	sync         *syncRound
	offsets      map[string]map[int32]committed
}

type member struct {
	id               string
	instanceID       *string
	protocols        []protocol.JoinGroupRequestProtocol
	rebalanceTimeout int32
	joined           bool // rejoined in the current round
	assignment       []byte
}

// rebalance is one join round; done closes when it completes, after which
// the other fields are the outcome.
type rebalance struct {
	done       chan struct{}
	timer      *time.Timer
	generation int32
	leader     string
	members    []protocol.JoinGroupResponseMember
	joined     map[string]bool
}

// syncRound waits for the leader's assignments; code is set (before done
// closes) when a new rebalance cut it short.
type syncRound struct {
	done chan struct{}
	code int16
}

type committed struct {
	offset   int64
	epoch    int32
	metadata *string
}

func (c *Cluster) group(id string) *group {
	g := c.groups[id]
	if g == nil {
		g = &group{id: id, members: map[string]*member{}, pending: map[string]bool{}, offsets: map[string]map[int32]committed{}}
		c.groups[id] = g
	}
	return g
}

// coordinatorCode is NOT_COORDINATOR on every broker but the coordinator.
func (b *Broker) coordinatorCode() int16 {
	if b.id != b.cluster.cfg.Coordinator {
		return errNotCoordinator
	}
	return errNone
}

func (b *Broker) findCoordinator(r *protocol.FindCoordinatorRequest, v int16) *protocol.FindCoordinatorResponse {
	resp := &protocol.FindCoordinatorResponse{}
	ep, ok := b.cluster.nodeEndpoint(b.cluster.cfg.Coordinator)
	code := errNone
	if !ok {
		code, ep = errCoordinatorNotAvailable, protocol.NodeEndpoint{NodeID: -1, Port: -1}
	}
	if v < 4 {
		resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = code, ep.NodeID, ep.Host, ep.Port
		return resp
	}
	for _, key := range r.CoordinatorKeys {
		resp.Coordinators = append(resp.Coordinators, protocol.FindCoordinatorResponseCoordinator{
			CoordinatorKey: key, NodeID: ep.NodeID, Host: ep.Host, Port: ep.Port, ErrorCode: code,
		})
	}
	return resp
}

func (b *Broker) joinGroup(c *conn, r *protocol.JoinGroupRequest, hdr protocol.RequestHeader) (protocol.Response, Action) {
	v := hdr.Version
	fail := func(code int16, memberID string) (protocol.Response, Action) {
		return &protocol.JoinGroupResponse{ErrorCode: code, GenerationID: -1, MemberID: memberID}, Action{}
	}
	if code := b.coordinatorCode(); code != errNone {
		return fail(code, r.MemberID)
	}
	cl := b.cluster
	cl.mu.Lock()
	g := cl.group(r.GroupID)
	if len(r.Protocols) == 0 || r.ProtocolType == "" || (len(g.members) > 0 && r.ProtocolType != g.protocolType) {
		cl.mu.Unlock()
		return fail(errInconsistentGroupProto, r.MemberID)
	}
	id := r.MemberID
	switch {
	case id == "":
		cl.nextMember++
		clientID := "member"
		if hdr.ClientID != nil && *hdr.ClientID != "" {
			clientID = *hdr.ClientID
		}
		id = fmt.Sprintf("%s-%d", clientID, cl.nextMember)
		if v >= 4 {
			// KIP-394: the member must come back with the id it is given.
			g.pending[id] = true
			cl.mu.Unlock()
			return fail(errMemberIDRequired, id)
		}
	case g.members[id] == nil && !g.pending[id]:
		cl.mu.Unlock()
		return fail(errUnknownMemberID, id)
	}
	delete(g.pending, id)
	m := g.members[id]
	if m == nil {
		m = &member{id: id}
		g.members[id] = m
		g.order = append(g.order, id)
	}
	m.instanceID, m.protocols, m.rebalanceTimeout = r.GroupInstanceID, r.Protocols, r.RebalanceTimeoutMs
	g.protocolType = r.ProtocolType
	if g.state != groupPreparing {
		cl.startRebalance(g)
	}
	m.joined = true
	rb := g.rebalance
	cl.maybeCompleteJoin(g)
	cl.mu.Unlock()

	if !hold(Action{Wait: rb.done}, c.stopped) {
		return nil, Action{Close: true}
	}

	cl.mu.Lock()
	defer cl.mu.Unlock()
	if !rb.joined[id] {
		return fail(errUnknownMemberID, id)
	}
	resp := &protocol.JoinGroupResponse{
		GenerationID: rb.generation,
		ProtocolName: g.protocolName,
		Leader:       rb.leader,
		MemberID:     id,
	}
	if v >= 7 {
		pt := g.protocolType
		resp.ProtocolType = &pt
	}
	if id == rb.leader {
		resp.Members = rb.members
	}
	return resp, Action{}
}

// startRebalance opens a join round: every member must rejoin. c.mu held.
func (c *Cluster) startRebalance(g *group) {
	if g.sync != nil {
		g.sync.code = errRebalanceInProgress
		close(g.sync.done)
		g.sync = nil
	}
	g.state = groupPreparing
	timeout := int32(0)
	for _, m := range g.members {
		m.joined = false
		timeout = max(timeout, m.rebalanceTimeout)
	}
	rb := &rebalance{done: make(chan struct{})}
	g.rebalance = rb
	// Members that never rejoin are dropped when the rebalance times out,
	// as Kafka does; tests with well-behaved clients never reach it.
	rb.timer = time.AfterFunc(time.Duration(max(timeout, 1))*time.Millisecond, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if g.rebalance == rb && g.state == groupPreparing {
			c.completeJoin(g)
		}
	})
}

// maybeCompleteJoin ends the join round once every member rejoined.
func (c *Cluster) maybeCompleteJoin(g *group) {
	if g.state != groupPreparing {
		return
	}
	for _, m := range g.members {
		if !m.joined {
			return
		}
	}
	c.completeJoin(g)
}

// completeJoin drops the members that did not rejoin and starts the next
// generation. c.mu held.
func (c *Cluster) completeJoin(g *group) {
	rb := g.rebalance
	rb.timer.Stop()
	g.order = slices.DeleteFunc(g.order, func(id string) bool {
		if !g.members[id].joined {
			delete(g.members, id)
			return true
		}
		return false
	})
	g.generation++
	rb.generation = g.generation
	rb.joined = map[string]bool{}
	if len(g.order) == 0 {
		g.state, g.leader, g.protocolName = groupEmpty, "", ""
		close(rb.done)
		return
	}
	if g.members[g.leader] == nil {
		g.leader = g.order[0]
	}
	g.protocolName = g.chooseProtocol()
	rb.leader = g.leader
	for _, id := range g.order {
		m := g.members[id]
		m.assignment = nil
		rb.joined[id] = true
		rb.members = append(rb.members, protocol.JoinGroupResponseMember{
			MemberID: id, GroupInstanceID: m.instanceID, Metadata: m.metadata(g.protocolName),
		})
	}
	g.state = groupCompleting
	g.sync = &syncRound{done: make(chan struct{})}
	close(rb.done)
}

// chooseProtocol picks the leader's most preferred protocol that every
// member supports (Kafka votes; with one assignor the outcome is the same).
func (g *group) chooseProtocol() string {
	for _, p := range g.members[g.leader].protocols {
		all := true
		for _, m := range g.members {
			all = all && m.metadata(p.Name) != nil
		}
		if all {
			return p.Name
		}
	}
	return g.members[g.leader].protocols[0].Name
}

func (m *member) metadata(protocolName string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocolName {
			if p.Metadata == nil {
				return []byte{}
			}
			return p.Metadata
		}
	}
	return nil
}

// checkMember validates a member and generation. c.mu held.
func (g *group) checkMember(id string, generation int32) int16 {
	switch {
	case g == nil || g.members[id] == nil:
		return errUnknownMemberID
	case generation != g.generation:
		return errIllegalGeneration
	}
	return errNone
}

func (b *Broker) syncGroup(c *conn, r *protocol.SyncGroupRequest, v int16) (protocol.Response, Action) {
	resp := &protocol.SyncGroupResponse{}
	if resp.ErrorCode = b.coordinatorCode(); resp.ErrorCode != errNone {
		return resp, Action{}
	}
	cl := b.cluster
	cl.mu.Lock()
	g := cl.groups[r.GroupID]
	if resp.ErrorCode = g.checkMember(r.MemberID, r.GenerationID); resp.ErrorCode != errNone {
		cl.mu.Unlock()
		return resp, Action{}
	}
	if v >= 5 {
		pt, pn := g.protocolType, g.protocolName
		resp.ProtocolType, resp.ProtocolName = &pt, &pn
	}
	switch g.state {
	case groupPreparing:
		resp.ErrorCode = errRebalanceInProgress
	case groupStable:
		resp.Assignment = g.members[r.MemberID].assignment
	case groupCompleting:
		if r.MemberID == g.leader {
			for _, a := range r.Assignments {
				if m := g.members[a.MemberID]; m != nil {
					m.assignment = a.Assignment
				}
			}
			g.state = groupStable
			close(g.sync.done)
			g.sync = nil
			resp.Assignment = g.members[r.MemberID].assignment
			break
		}
		round := g.sync
		cl.mu.Unlock()
		if !hold(Action{Wait: round.done}, c.stopped) {
			return nil, Action{Close: true}
		}
		cl.mu.Lock()
		if resp.ErrorCode = round.code; resp.ErrorCode == errNone {
			if m := g.members[r.MemberID]; m != nil {
				resp.Assignment = m.assignment
			} else {
				resp.ErrorCode = errUnknownMemberID
			}
		}
	}
	cl.mu.Unlock()
	if resp.Assignment == nil && resp.ErrorCode == errNone {
		resp.Assignment = []byte{}
	}
	return resp, Action{}
}

func (b *Broker) heartbeat(r *protocol.HeartbeatRequest) *protocol.HeartbeatResponse {
	resp := &protocol.HeartbeatResponse{}
	if resp.ErrorCode = b.coordinatorCode(); resp.ErrorCode != errNone {
		return resp
	}
	cl := b.cluster
	cl.mu.Lock()
	defer cl.mu.Unlock()
	g := cl.groups[r.GroupID]
	if resp.ErrorCode = g.checkMember(r.MemberID, r.GenerationID); resp.ErrorCode == errNone && g.state == groupPreparing {
		resp.ErrorCode = errRebalanceInProgress
	}
	return resp
}

func (b *Broker) leaveGroup(r *protocol.LeaveGroupRequest, v int16) *protocol.LeaveGroupResponse {
	resp := &protocol.LeaveGroupResponse{}
	if resp.ErrorCode = b.coordinatorCode(); resp.ErrorCode != errNone {
		return resp
	}
	cl := b.cluster
	cl.mu.Lock()
	defer cl.mu.Unlock()
	g := cl.groups[r.GroupID]
	leave := func(id string) int16 {
		if g == nil || g.members[id] == nil {
			return errUnknownMemberID
		}
		delete(g.members, id)
		g.order = slices.DeleteFunc(g.order, func(s string) bool { return s == id })
		if g.state != groupPreparing {
			cl.startRebalance(g)
		}
		cl.maybeCompleteJoin(g)
		return errNone
	}
	if v < 3 {
		resp.ErrorCode = leave(r.MemberID)
		return resp
	}
	for _, m := range r.Members {
		resp.Members = append(resp.Members, protocol.LeaveGroupResponseMember{
			MemberID: m.MemberID, GroupInstanceID: m.GroupInstanceID, ErrorCode: leave(m.MemberID),
		})
	}
	return resp
}

func (b *Broker) offsetCommit(r *protocol.OffsetCommitRequest) *protocol.OffsetCommitResponse {
	cl := b.cluster
	cl.mu.Lock()
	defer cl.mu.Unlock()
	code := b.coordinatorCode()
	g := cl.groups[r.GroupID]
	if code == errNone {
		switch {
		case r.GenerationID < 0 && (g == nil || len(g.members) == 0):
			// A standalone consumer only stores offsets.
		case g != nil && g.state == groupCompleting:
			code = errRebalanceInProgress
		default:
			code = g.checkMember(r.MemberID, r.GenerationID)
		}
	}
	if code == errNone && g == nil {
		g = cl.group(r.GroupID)
	}
	resp := &protocol.OffsetCommitResponse{}
	for _, rt := range r.Topics {
		out := protocol.OffsetCommitResponseTopic{Name: rt.Name}
		for _, rp := range rt.Partitions {
			pc := code
			if pc == errNone && cl.part(rt.Name, rp.PartitionIndex) == nil {
				pc = errUnknownTopicOrPartition
			}
			if pc == errNone {
				if g.offsets[rt.Name] == nil {
					g.offsets[rt.Name] = map[int32]committed{}
				}
				g.offsets[rt.Name][rp.PartitionIndex] = committed{rp.CommittedOffset, rp.CommittedLeaderEpoch, rp.CommittedMetadata}
			}
			out.Partitions = append(out.Partitions, protocol.OffsetCommitResponsePartition{PartitionIndex: rp.PartitionIndex, ErrorCode: pc})
		}
		resp.Topics = append(resp.Topics, out)
	}
	return resp
}

func (b *Broker) offsetFetch(r *protocol.OffsetFetchRequest, v int16) *protocol.OffsetFetchResponse {
	cl := b.cluster
	cl.mu.Lock()
	defer cl.mu.Unlock()
	code := b.coordinatorCode()
	resp := &protocol.OffsetFetchResponse{}
	if v < 8 {
		resp.ErrorCode = code
		if code == errNone {
			resp.Topics = cl.committedOffsets(r.GroupID, r.Topics)
		}
		return resp
	}
	for _, rg := range r.Groups {
		out := protocol.OffsetFetchResponseGroup{GroupID: rg.GroupID, ErrorCode: code}
		if code == errNone {
			out.Topics = cl.committedOffsets(rg.GroupID, rg.Topics)
		}
		resp.Groups = append(resp.Groups, out)
	}
	return resp
}

// committedOffsets reads a group's offsets; nil topics means all. c.mu held.
func (c *Cluster) committedOffsets(groupID string, topics []protocol.OffsetFetchRequestTopic) []protocol.OffsetFetchResponseTopic {
	var offsets map[string]map[int32]committed
	if g := c.groups[groupID]; g != nil {
		offsets = g.offsets
	}
	if topics == nil {
		names := make([]string, 0, len(offsets))
		for name := range offsets {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			var ps []int32
			for p := range offsets[name] {
				ps = append(ps, p)
			}
			slices.Sort(ps)
			topics = append(topics, protocol.OffsetFetchRequestTopic{Name: name, PartitionIndexes: ps})
		}
	}
	var out []protocol.OffsetFetchResponseTopic
	for _, rt := range topics {
		t := protocol.OffsetFetchResponseTopic{Name: rt.Name}
		for _, p := range rt.PartitionIndexes {
			noMetadata := ""
			res := protocol.OffsetFetchResponsePartition{PartitionIndex: p, CommittedOffset: -1, CommittedLeaderEpoch: -1, Metadata: &noMetadata}
			if o, ok := offsets[rt.Name][p]; ok {
				res.CommittedOffset, res.CommittedLeaderEpoch = o.offset, o.epoch
				if o.metadata != nil {
					res.Metadata = o.metadata
				}
			}
			t.Partitions = append(t.Partitions, res)
		}
		out = append(out, t)
	}
	return out
}

// Committed returns a group's committed offset for a partition.
func (c *Cluster) Committed(groupID, topicName string, p int32) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.groups[groupID]; g != nil {
		if o, ok := g.offsets[topicName][p]; ok {
			return o.offset, true
		}
	}
	return 0, false
}

// Commit stores a committed offset for a group, as a test's starting point.
func (c *Cluster) Commit(groupID, topicName string, p int32, offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.group(groupID)
	if g.offsets[topicName] == nil {
		g.offsets[topicName] = map[int32]committed{}
	}
	g.offsets[topicName][p] = committed{offset: offset, epoch: -1}
}
