package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// clientGroupsConsumerProtocolVersion is the consumer protocol version the
// Client writes subscriptions and assignments in: version 1 carries owned
// partitions, which is all kafka-go's types have.
const clientGroupsConsumerProtocolVersion int16 = 1

// JoinGroupRequest joins a member to a group (or rejoins it).
type JoinGroupRequest struct {
	// Addr is the cluster; nil means the Client's Addr. The request goes
	// to the group's coordinator.
	Addr net.Addr

	// GroupID is the group to join.
	GroupID string

	// SessionTimeout is how long the coordinator waits for a heartbeat
	// before it removes the member.
	SessionTimeout time.Duration

	// RebalanceTimeout is how long the coordinator waits for every member
	// to rejoin during a rebalance.
	RebalanceTimeout time.Duration

	// MemberID is the id the coordinator gave the member, empty on the
	// first join. Brokers that require a known member id answer a first
	// join with MemberIDRequired and the id to join again with.
	MemberID string

	// GroupInstanceID is the static membership id (KIP-345); empty for a
	// dynamic member.
	GroupInstanceID string

	// ProtocolType is the class of protocols the group uses ("consumer").
	ProtocolType string

	// Protocols lists the assignment protocols the member supports, most
	// preferred first.
	Protocols []GroupProtocol
}

// GroupProtocol is an assignment protocol a member supports and its
// subscription for it.
type GroupProtocol struct {
	// Name is the protocol's name (the assignor, e.g. "range").
	Name string

	// Metadata is the member's subscription, sent in the consumer
	// protocol's format.
	Metadata GroupProtocolSubscription
}

// GroupProtocolSubscription is a consumer's subscription.
type GroupProtocolSubscription struct {
	// Topics lists the topics to consume.
	Topics []string

	// UserData is opaque data for the assignor.
	UserData []byte

	// OwnedPartitions maps topics to the partitions the member holds.
	OwnedPartitions map[string][]int
}

// JoinGroupResponse is the coordinator's answer to a JoinGroup request.
type JoinGroupResponse struct {
	// Error is the Kafka error the coordinator answered with, or nil.
	// Use errors.Is to compare it with Kafka errors.
	Error error

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// GenerationID is the group's generation.
	GenerationID int

	// ProtocolName is the assignment protocol the coordinator chose.
	ProtocolName string

	// ProtocolType is the group's protocol type (empty with brokers too old
	// to send it).
	ProtocolType string

	// LeaderID is the member id of the group's leader.
	LeaderID string

	// MemberID is this member's id.
	MemberID string

	// Members lists every member and its subscription; only the leader
	// receives it.
	Members []JoinGroupResponseMember
}

// JoinGroupResponseMember is one member of the group, as the leader sees it.
type JoinGroupResponseMember struct {
	// ID is the member's id.
	ID string

	// GroupInstanceID is the member's static id, if it has one.
	GroupInstanceID string

	// Metadata is the member's subscription for the chosen protocol.
	Metadata GroupProtocolSubscription
}

// JoinGroup sends a JoinGroup request to the group's coordinator. The
// coordinator holds the answer until the group's rebalance completes, so
// the call can last up to the rebalance timeout. Subscriptions are written
// in the consumer protocol (version 1).
func (c *Client) JoinGroup(ctx context.Context, req *JoinGroupRequest) (*JoinGroupResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).JoinGroup: nil request")
	}
	join := &protocol.JoinGroupRequest{
		GroupID:            req.GroupID,
		SessionTimeoutMs:   int32(req.SessionTimeout.Milliseconds()),
		RebalanceTimeoutMs: int32(req.RebalanceTimeout.Milliseconds()),
		MemberID:           req.MemberID,
		GroupInstanceID:    clientGroupsNullable(req.GroupInstanceID),
		ProtocolType:       req.ProtocolType,
		Protocols:          make([]protocol.JoinGroupRequestProtocol, 0, len(req.Protocols)),
	}
	for _, p := range req.Protocols {
		sub := protocol.ConsumerProtocolSubscription{
			Version:         clientGroupsConsumerProtocolVersion,
			Topics:          p.Metadata.Topics,
			UserData:        p.Metadata.UserData,
			OwnedPartitions: clientGroupsTopicPartitions(p.Metadata.OwnedPartitions),
			GenerationID:    -1,
		}
		join.Protocols = append(join.Protocols, protocol.JoinGroupRequestProtocol{Name: p.Name, Metadata: sub.AppendTo(nil)})
	}

	r, err := responseAs[*protocol.JoinGroupResponse](c.clientGroupsToCoordinatorAlone(ctx, req.Addr, req.GroupID, join))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).JoinGroup: %w", err)
	}
	resp := &JoinGroupResponse{
		Error:        makeError(r.ErrorCode, ""),
		Throttle:     clientThrottle(r.ThrottleTimeMs),
		GenerationID: int(r.GenerationID),
		ProtocolName: r.ProtocolName,
		ProtocolType: deref(r.ProtocolType),
		LeaderID:     r.Leader,
		MemberID:     r.MemberID,
		Members:      make([]JoinGroupResponseMember, 0, len(r.Members)),
	}
	for _, member := range r.Members {
		sub := GroupProtocolSubscription{OwnedPartitions: map[string][]int{}}
		if len(member.Metadata) > 0 {
			var s protocol.ConsumerProtocolSubscription
			if err := s.Decode(member.Metadata); err != nil {
				return nil, fmt.Errorf("kafka.(*Client).JoinGroup: metadata of member %q: %w", member.MemberID, err)
			}
			sub.Topics, sub.UserData = s.Topics, s.UserData
			for _, tp := range s.OwnedPartitions {
				sub.OwnedPartitions[tp.Topic] = append(sub.OwnedPartitions[tp.Topic], clientIntsAs[int](tp.Partitions)...)
			}
		}
		resp.Members = append(resp.Members, JoinGroupResponseMember{
			ID:              member.MemberID,
			GroupInstanceID: deref(member.GroupInstanceID),
			Metadata:        sub,
		})
	}
	return resp, nil
}

// SyncGroupRequest ends a member's part of a rebalance: the leader sends
// every member's assignment, the others send none.
type SyncGroupRequest struct {
	// Addr is the cluster; nil means the Client's Addr. The request goes
	// to the group's coordinator.
	Addr net.Addr

	// GroupID is the group.
	GroupID string

	// GenerationID is the generation JoinGroup returned.
	GenerationID int

	// MemberID is the member's id.
	MemberID string

	// GroupInstanceID is the member's static id, if it has one.
	GroupInstanceID string

	// ProtocolType is the group's protocol type. Kafka 2.5 and later
	// require it and ProtocolName (from JoinGroup's answer), answering
	// InconsistentGroupProtocol when either is empty or does not match.
	ProtocolType string

	// ProtocolName is the assignment protocol JoinGroup chose.
	ProtocolName string

	// Assignments holds every member's assignment (leader only).
	Assignments []SyncGroupRequestAssignment
}

// SyncGroupRequestAssignment is the assignment of one member.
type SyncGroupRequestAssignment struct {
	// MemberID is the member the assignment is for.
	MemberID string

	// Assignment is the member's partitions, sent in the consumer
	// protocol's format.
	Assignment GroupProtocolAssignment
}

// SyncGroupResponse is the coordinator's answer to a SyncGroup request.
type SyncGroupResponse struct {
	// Error is the Kafka error the coordinator answered with, or nil.
	// Use errors.Is to compare it with Kafka errors.
	Error error

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// ProtocolType is the group's protocol type (recent brokers only).
	ProtocolType string

	// ProtocolName is the group's assignment protocol (recent brokers
	// only).
	ProtocolName string

	// Assignment is this member's assignment.
	Assignment GroupProtocolAssignment
}

// GroupProtocolAssignment is the partitions assigned to a member.
type GroupProtocolAssignment struct {
	// AssignedPartitions maps topics to the member's partitions.
	AssignedPartitions map[string][]int

	// UserData is opaque data from the assignor.
	UserData []byte
}

// SyncGroup sends a SyncGroup request to the group's coordinator and returns
// the member's assignment. Assignments are written in the consumer protocol
// (version 1).
func (c *Client) SyncGroup(ctx context.Context, req *SyncGroupRequest) (*SyncGroupResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).SyncGroup: nil request")
	}
	sync := &protocol.SyncGroupRequest{
		GroupID:         req.GroupID,
		GenerationID:    int32(req.GenerationID),
		MemberID:        req.MemberID,
		GroupInstanceID: clientGroupsNullable(req.GroupInstanceID),
		ProtocolType:    clientGroupsNullable(req.ProtocolType),
		ProtocolName:    clientGroupsNullable(req.ProtocolName),
		Assignments:     make([]protocol.SyncGroupRequestAssignment, 0, len(req.Assignments)),
	}
	for _, a := range req.Assignments {
		as := protocol.ConsumerProtocolAssignment{
			Version:            clientGroupsConsumerProtocolVersion,
			AssignedPartitions: clientGroupsTopicPartitions(a.Assignment.AssignedPartitions),
			UserData:           a.Assignment.UserData,
		}
		sync.Assignments = append(sync.Assignments, protocol.SyncGroupRequestAssignment{MemberID: a.MemberID, Assignment: as.AppendTo(nil)})
	}

	r, err := responseAs[*protocol.SyncGroupResponse](c.clientGroupsToCoordinatorAlone(ctx, req.Addr, req.GroupID, sync))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).SyncGroup: %w", err)
	}
	resp := &SyncGroupResponse{
		Error:        makeError(r.ErrorCode, ""),
		Throttle:     clientThrottle(r.ThrottleTimeMs),
		ProtocolType: deref(r.ProtocolType),
		ProtocolName: deref(r.ProtocolName),
		Assignment:   GroupProtocolAssignment{AssignedPartitions: map[string][]int{}},
	}
	// An error answer, or a member the leader gave nothing, carries no
	// bytes: an empty assignment.
	if len(r.Assignment) > 0 {
		var as protocol.ConsumerProtocolAssignment
		if err := as.Decode(r.Assignment); err != nil {
			return nil, fmt.Errorf("kafka.(*Client).SyncGroup: assignment: %w", err)
		}
		resp.Assignment.UserData = as.UserData
		for _, tp := range as.AssignedPartitions {
			for _, p := range tp.Partitions {
				resp.Assignment.AssignedPartitions[tp.Topic] = append(resp.Assignment.AssignedPartitions[tp.Topic], int(p))
			}
		}
	}
	return resp, nil
}

// HeartbeatRequest tells a group's coordinator that a member is alive.
type HeartbeatRequest struct {
	// Addr is the cluster; nil means the Client's Addr. The request goes
	// to the group's coordinator.
	Addr net.Addr

	// GroupID is the group.
	GroupID string

	// GenerationID is the member's generation.
	GenerationID int32

	// MemberID is the member's id.
	MemberID string

	// GroupInstanceID is the member's static id, if it has one.
	GroupInstanceID string
}

// HeartbeatResponse is the coordinator's answer to a heartbeat.
type HeartbeatResponse struct {
	// Error is the Kafka error the coordinator answered with, or nil;
	// RebalanceInProgress tells the member to rejoin.
	Error error

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration
}

// Heartbeat sends a heartbeat to the group's coordinator.
func (c *Client) Heartbeat(ctx context.Context, req *HeartbeatRequest) (*HeartbeatResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).Heartbeat: nil request")
	}
	r, err := responseAs[*protocol.HeartbeatResponse](c.sendToCoordinator(ctx, req.Addr, req.GroupID, protocol.CoordinatorKeyTypeGroup, &protocol.HeartbeatRequest{
		GroupID:         req.GroupID,
		GenerationID:    req.GenerationID,
		MemberID:        req.MemberID,
		GroupInstanceID: clientGroupsNullable(req.GroupInstanceID),
	}))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).Heartbeat: %w", err)
	}
	return &HeartbeatResponse{
		Error:    makeError(r.ErrorCode, ""),
		Throttle: clientThrottle(r.ThrottleTimeMs),
	}, nil
}

// LeaveGroupRequest removes members from a group.
type LeaveGroupRequest struct {
	// Addr is the cluster; nil means the Client's Addr. The request goes
	// to the group's coordinator.
	Addr net.Addr

	// GroupID is the group.
	GroupID string

	// Members lists the leaving members. Brokers older than Kafka 2.4
	// take a single member: only the first is sent to them.
	Members []LeaveGroupRequestMember
}

// LeaveGroupRequestMember identifies a leaving member.
type LeaveGroupRequestMember struct {
	// ID is the member's id.
	ID string

	// GroupInstanceID is the member's static id, if it has one.
	GroupInstanceID string
}

// LeaveGroupResponse is the coordinator's answer to a LeaveGroup request.
type LeaveGroupResponse struct {
	// Error is the Kafka error the coordinator answered with for the
	// request as a whole, or nil.
	Error error

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Members has the outcome for each leaving member.
	Members []LeaveGroupResponseMember
}

// LeaveGroupResponseMember is the outcome for one leaving member.
type LeaveGroupResponseMember struct {
	// ID is the member's id.
	ID string

	// GroupInstanceID is the member's static id, if it has one.
	GroupInstanceID string

	// Error is the Kafka error removing this member, or nil.
	Error error
}

// LeaveGroup sends a LeaveGroup request to the group's coordinator. When the
// broker answers without per-member results (brokers older than Kafka 2.4,
// or an error for the whole request), Members holds the first requested
// member, its outcome in the response's Error.
func (c *Client) LeaveGroup(ctx context.Context, req *LeaveGroupRequest) (*LeaveGroupResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).LeaveGroup: nil request")
	}
	leave := &protocol.LeaveGroupRequest{
		GroupID: req.GroupID,
		Members: make([]protocol.LeaveGroupRequestMember, 0, len(req.Members)),
	}
	for _, member := range req.Members {
		leave.Members = append(leave.Members, protocol.LeaveGroupRequestMember{
			MemberID:        member.ID,
			GroupInstanceID: clientGroupsNullable(member.GroupInstanceID),
		})
	}
	if len(req.Members) > 0 {
		leave.MemberID = req.Members[0].ID // versions 0-2
	}

	r, err := responseAs[*protocol.LeaveGroupResponse](c.sendToCoordinator(ctx, req.Addr, req.GroupID, protocol.CoordinatorKeyTypeGroup, leave))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).LeaveGroup: %w", err)
	}
	resp := &LeaveGroupResponse{
		Error:    makeError(r.ErrorCode, ""),
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Members:  make([]LeaveGroupResponseMember, 0, len(r.Members)),
	}
	for _, member := range r.Members {
		resp.Members = append(resp.Members, LeaveGroupResponseMember{
			ID:              member.MemberID,
			GroupInstanceID: deref(member.GroupInstanceID),
			Error:           makeError(member.ErrorCode, ""),
		})
	}
	if len(r.Members) == 0 && len(req.Members) > 0 {
		resp.Members = append(resp.Members, LeaveGroupResponseMember{
			ID:              req.Members[0].ID,
			GroupInstanceID: req.Members[0].GroupInstanceID,
		})
	}
	return resp, nil
}

// clientGroupsToCoordinatorAlone is sendToCoordinator for the
// requests a coordinator holds until a rebalance completes (JoinGroup, a
// follower's SyncGroup). Transport shares one connection per broker and
// sends one request at a time on it, so such a request would hold back every
// other request of the Client to that broker, the other members' JoinGroup
// and Heartbeat included: members sharing a Client could then never
// rebalance together. With a *Transport it goes on a connection of its own,
// closed once answered; other RoundTrippers get it as any request.
func (c *Client) clientGroupsToCoordinatorAlone(ctx context.Context, addr net.Addr, group string, req protocol.Request) (protocol.Response, error) {
	tr, ok := c.transport().(*Transport)
	if !ok {
		return c.sendToCoordinator(ctx, addr, group, protocol.CoordinatorKeyTypeGroup, req)
	}
	addr, err := c.address(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	b, err := c.findCoordinator(ctx, addr, group, protocol.CoordinatorKeyTypeGroup)
	if err != nil {
		return nil, err
	}
	to := brokerAddr(b)
	conn, err := tr.newDialer(nil).DialContext(ctx, "tcp", to.String())
	if err != nil {
		return nil, fmt.Errorf("sending %s to %s: %w", req.Key(), to, err)
	}
	defer conn.Close()
	resp, err := sendRequest(ctx, conn, req)
	if err != nil {
		return nil, fmt.Errorf("sending %s to %s: %w", req.Key(), to, err)
	}
	return resp, nil
}

// clientGroupsTopicPartitions converts kafka-go's topic → partitions maps
// to the consumer protocol's list, sorted by topic so that the bytes do not
// depend on map order.
func clientGroupsTopicPartitions(m map[string][]int) []protocol.ConsumerProtocolTopicPartitions {
	if len(m) == 0 {
		return nil
	}
	topics := clientSortedKeys(m)
	out := make([]protocol.ConsumerProtocolTopicPartitions, len(topics))
	for i, t := range topics {
		out[i] = protocol.ConsumerProtocolTopicPartitions{Topic: t, Partitions: clientGroupsInt32s(m[t])}
	}
	return out
}
