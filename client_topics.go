package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// CreateTopicsRequest asks the cluster to create topics.
type CreateTopicsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topics are the topics to create, each with its settings.
	Topics []TopicConfig

	// ValidateOnly makes the controller check the topics as if it created
	// them, without creating anything.
	ValidateOnly bool
}

// CreateTopicsResponse is the cluster's answer to a CreateTopicsRequest.
type CreateTopicsResponse struct {
	// Throttle is how long the broker held the request back for quotas.
	Throttle time.Duration

	// Errors has one entry per topic of the answer: nil when the topic was
	// created, else a kafka.Error (possibly wrapped with the broker's
	// message; test with errors.Is).
	Errors map[string]error
}

// CreateTopics creates topics at the cluster's controller. Failures of
// single topics, such as TopicAlreadyExists, are in the response's Errors;
// the error is for the request as a whole.
//
// The controller is given the smaller of Client.Timeout and the time left
// on ctx (halved, to leave room for the answer), or 2 seconds when
// Client.Timeout is zero, to finish creating the topics.
func (c *Client) CreateTopics(ctx context.Context, req *CreateTopicsRequest) (*CreateTopicsResponse, error) {
	if req == nil {
		return nil, errors.New("creating topics: nil request")
	}
	preq := &protocol.CreateTopicsRequest{
		TimeoutMs:    protocol.Millis(c.clientBrokerTimeout(ctx, defaultCreateTopicsTimeout)),
		ValidateOnly: req.ValidateOnly,
	}
	if len(req.Topics) > 0 {
		preq.Topics = make([]protocol.CreateTopicsRequestTopic, len(req.Topics))
	}
	for i, t := range req.Topics {
		pt := &preq.Topics[i]
		pt.Name = t.Topic
		pt.NumPartitions = int32(t.NumPartitions)
		pt.ReplicationFactor = int16(t.ReplicationFactor)
		for _, a := range t.ReplicaAssignments {
			pt.Assignments = append(pt.Assignments, protocol.CreateTopicsRequestAssignment{
				PartitionIndex: int32(a.Partition),
				BrokerIDs:      clientIntsAs[int32](a.Replicas),
			})
		}
		for _, e := range t.ConfigEntries {
			v := e.ConfigValue
			pt.Configs = append(pt.Configs, protocol.CreateTopicsRequestConfig{Name: e.ConfigName, Value: &v})
		}
	}

	resp, err := responseAs[*protocol.CreateTopicsResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("creating topics: %w", err)
	}
	out := &CreateTopicsResponse{
		Throttle: clientThrottle(resp.ThrottleTimeMs),
		Errors:   make(map[string]error, len(resp.Topics)),
	}
	for _, t := range resp.Topics {
		out.Errors[t.Name] = makeError(t.ErrorCode, deref(t.ErrorMessage))
	}
	return out, nil
}

// DeleteTopicsRequest asks the cluster to delete topics.
type DeleteTopicsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topics are the names of the topics to delete.
	Topics []string
}

// DeleteTopicsResponse is the cluster's answer to a DeleteTopicsRequest.
type DeleteTopicsResponse struct {
	// Throttle is how long the broker held the request back for quotas.
	Throttle time.Duration

	// Errors has one entry per topic of the answer: nil when the topic was
	// deleted, else its kafka.Error (such as UnknownTopicOrPartition).
	Errors map[string]error
}

// DeleteTopics deletes topics at the cluster's controller. Failures of
// single topics are in the response's Errors; the error is for the request
// as a whole. The controller's time limit is set as for CreateTopics.
func (c *Client) DeleteTopics(ctx context.Context, req *DeleteTopicsRequest) (*DeleteTopicsResponse, error) {
	if req == nil {
		return nil, errors.New("deleting topics: nil request")
	}
	preq := &protocol.DeleteTopicsRequest{
		TopicNames: req.Topics, // v1-5
		TimeoutMs:  protocol.Millis(c.clientBrokerTimeout(ctx, defaultDeleteTopicsTimeout)),
	}
	for _, name := range req.Topics { // v6+
		preq.Topics = append(preq.Topics, protocol.DeleteTopicsRequestTopic{Name: name})
	}

	resp, err := responseAs[*protocol.DeleteTopicsResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("deleting topics: %w", err)
	}
	out := &DeleteTopicsResponse{
		Throttle: clientThrottle(resp.ThrottleTimeMs),
		Errors:   make(map[string]error, len(resp.Responses)),
	}
	for _, t := range resp.Responses {
		// The bare code, as kafka-go gives it (comparable with ==).
		out.Errors[t.Name] = errorFromCode(t.ErrorCode)
	}
	return out, nil
}

// CreatePartitionsRequest asks the cluster to add partitions to topics.
type CreatePartitionsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topics are the topics to grow, each with its new partition count.
	Topics []TopicPartitionsConfig

	// ValidateOnly makes the controller check the request without adding
	// any partition.
	ValidateOnly bool
}

// CreatePartitionsResponse is the cluster's answer to a
// CreatePartitionsRequest.
type CreatePartitionsResponse struct {
	// Throttle is how long the broker held the request back for quotas.
	Throttle time.Duration

	// Errors has one entry per topic of the answer: nil when its
	// partitions were added, else a kafka.Error (possibly wrapped with the
	// broker's message; test with errors.Is).
	Errors map[string]error
}

// TopicPartitionsConfig is one topic of a CreatePartitionsRequest.
type TopicPartitionsConfig struct {
	// Name is the topic's name.
	Name string

	// Count is the topic's new total number of partitions.
	Count int32

	// TopicPartitionAssignments places the new partitions, one entry per
	// new partition in order; empty lets the controller place them.
	TopicPartitionAssignments []TopicPartitionAssignment
}

// TopicPartitionAssignment is where one new partition's replicas go.
type TopicPartitionAssignment struct {
	// BrokerIDs are the replicas' brokers, the preferred leader first.
	BrokerIDs []int32
}

// CreatePartitions adds partitions to existing topics at the cluster's
// controller. Failures of single topics are in the response's Errors; the
// error is for the request as a whole. The controller's time limit is set
// as for CreateTopics.
func (c *Client) CreatePartitions(ctx context.Context, req *CreatePartitionsRequest) (*CreatePartitionsResponse, error) {
	if req == nil {
		return nil, errors.New("creating partitions: nil request")
	}
	preq := &protocol.CreatePartitionsRequest{
		TimeoutMs:    protocol.Millis(c.clientBrokerTimeout(ctx, defaultCreatePartitionsTimeout)),
		ValidateOnly: req.ValidateOnly,
	}
	for _, t := range req.Topics {
		pt := protocol.CreatePartitionsRequestTopic{Name: t.Name, Count: t.Count}
		// Left nil (null on the wire) when empty: the controller places them.
		for _, a := range t.TopicPartitionAssignments {
			pt.Assignments = append(pt.Assignments, protocol.CreatePartitionsRequestAssignment{BrokerIDs: a.BrokerIDs})
		}
		preq.Topics = append(preq.Topics, pt)
	}

	resp, err := responseAs[*protocol.CreatePartitionsResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("creating partitions: %w", err)
	}
	out := &CreatePartitionsResponse{
		Throttle: clientThrottle(resp.ThrottleTimeMs),
		Errors:   make(map[string]error, len(resp.Results)),
	}
	for _, r := range resp.Results {
		out.Errors[r.Name] = makeError(r.ErrorCode, deref(r.ErrorMessage))
	}
	return out, nil
}

// ElectLeadersRequest asks the controller to give partitions of a topic
// back to their preferred leader (the first replica of each).
type ElectLeadersRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topic is the topic whose partitions are elected.
	Topic string

	// Partitions are the partitions to elect a leader for (none when
	// empty).
	Partitions []int

	// Timeout is how long the controller may take to elect them; zero
	// sends 0.
	Timeout time.Duration
}

// ElectLeadersResponse is the controller's answer to an
// ElectLeadersRequest.
type ElectLeadersResponse struct {
	// Error is the kafka.Error the whole request failed with at the
	// controller (such as ClusterAuthorizationFailed), or nil.
	Error error

	// PartitionResults holds the outcome for every partition.
	PartitionResults []ElectLeadersResponsePartitionResult
}

// ElectLeadersResponsePartitionResult is the outcome for one partition.
type ElectLeadersResponsePartitionResult struct {
	// Partition is the partition's id.
	Partition int

	// Error is nil when the preferred leader was elected, else its
	// kafka.Error: ElectionNotNeeded when it already led, for instance.
	Error error
}

// ElectLeaders runs a preferred leader election at the controller.
// Failures are in the response; the error is for the request as a whole.
func (c *Client) ElectLeaders(ctx context.Context, req *ElectLeadersRequest) (*ElectLeadersResponse, error) {
	if req == nil {
		return nil, errors.New("electing leaders: nil request")
	}
	partitions := clientIntsAs[int32](req.Partitions)
	if partitions == nil {
		// An empty list, never null: null would mean every partition of
		// the cluster.
		partitions = []int32{}
	}
	preq := &protocol.ElectLeadersRequest{
		ElectionType:    protocol.ElectionTypePreferred,
		TopicPartitions: []protocol.ElectLeadersRequestTopic{{Topic: req.Topic, Partitions: partitions}},
		TimeoutMs:       protocol.Millis(req.Timeout),
	}

	resp, err := responseAs[*protocol.ElectLeadersResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("electing leaders of %q: %w", req.Topic, err)
	}
	out := &ElectLeadersResponse{Error: errorFromCode(resp.ErrorCode)}
	for _, t := range resp.ReplicaElectionResults {
		for _, p := range t.PartitionResult {
			out.PartitionResults = append(out.PartitionResults, ElectLeadersResponsePartitionResult{
				Partition: int(p.PartitionID),
				Error:     makeError(p.ErrorCode, deref(p.ErrorMessage)),
			})
		}
	}
	return out, nil
}

// AlterPartitionReassignmentsRequest moves partitions' replicas to other
// brokers, or cancels moves in progress (KIP-455).
type AlterPartitionReassignmentsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topic is the topic of the assignments that name none.
	Topic string

	// Assignments are the partitions to move.
	Assignments []AlterPartitionReassignmentsRequestAssignment

	// Timeout is how long the controller may take to start the moves; zero
	// sends 0.
	Timeout time.Duration
}

// AlterPartitionReassignmentsRequestAssignment is the new replica set of
// one partition.
type AlterPartitionReassignmentsRequestAssignment struct {
	// Topic is the partition's topic; empty means the request's Topic.
	Topic string

	// PartitionID is the partition's id.
	PartitionID int

	// BrokerIDs is the partition's new replica set, the preferred leader
	// first; nil cancels the partition's reassignment in progress.
	BrokerIDs []int
}

// AlterPartitionReassignmentsResponse is the controller's answer to an
// AlterPartitionReassignmentsRequest.
type AlterPartitionReassignmentsResponse struct {
	// Error is the kafka.Error the whole request failed with, or nil.
	Error error

	// PartitionResults holds the outcome for every partition.
	PartitionResults []AlterPartitionReassignmentsResponsePartitionResult
}

// AlterPartitionReassignmentsResponsePartitionResult is the outcome for
// one partition.
type AlterPartitionReassignmentsResponsePartitionResult struct {
	// Topic and PartitionID name the partition.
	Topic       string
	PartitionID int

	// Error is nil when the move started (or was cancelled), else its
	// kafka.Error, possibly wrapped with the controller's message.
	Error error
}

// AlterPartitionReassignments starts (or cancels) replica moves at the
// controller. The moves go on after the call returns: see
// ListPartitionReassignments. Failures are in the response; the error is
// for the request as a whole.
func (c *Client) AlterPartitionReassignments(ctx context.Context, req *AlterPartitionReassignmentsRequest) (*AlterPartitionReassignmentsResponse, error) {
	if req == nil {
		return nil, errors.New("altering partition reassignments: nil request")
	}
	preq := &protocol.AlterPartitionReassignmentsRequest{TimeoutMs: protocol.Millis(req.Timeout)}
	pos := map[string]int{} // topic's index in preq.Topics, in order of first use
	for _, a := range req.Assignments {
		topic := a.Topic
		if topic == "" {
			topic = req.Topic
		}
		k, ok := pos[topic]
		if !ok {
			k = len(preq.Topics)
			pos[topic] = k
			preq.Topics = append(preq.Topics, protocol.AlterPartitionReassignmentsRequestTopic{Name: topic})
		}
		preq.Topics[k].Partitions = append(preq.Topics[k].Partitions, protocol.AlterPartitionReassignmentsRequestPartition{
			PartitionIndex: int32(a.PartitionID),
			Replicas:       clientIntsAs[int32](a.BrokerIDs), // nil: null, a cancellation
		})
	}

	resp, err := responseAs[*protocol.AlterPartitionReassignmentsResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("altering partition reassignments: %w", err)
	}
	out := &AlterPartitionReassignmentsResponse{Error: makeError(resp.ErrorCode, deref(resp.ErrorMessage))}
	for _, t := range resp.Responses {
		for _, p := range t.Partitions {
			out.PartitionResults = append(out.PartitionResults, AlterPartitionReassignmentsResponsePartitionResult{
				Topic:       t.Name,
				PartitionID: int(p.PartitionIndex),
				Error:       makeError(p.ErrorCode, deref(p.ErrorMessage)),
			})
		}
	}
	return out, nil
}

// ListPartitionReassignmentsRequest asks which replica moves are in
// progress.
type ListPartitionReassignmentsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topics are the partitions to look at, by topic name; empty means
	// every partition of the cluster.
	Topics map[string]ListPartitionReassignmentsRequestTopic

	// Timeout is how long the controller may take to answer; zero sends 0.
	Timeout time.Duration
}

// ListPartitionReassignmentsRequestTopic is the partitions of one topic to
// look at.
type ListPartitionReassignmentsRequestTopic struct {
	PartitionIndexes []int
}

// ListPartitionReassignmentsResponse is the controller's answer to a
// ListPartitionReassignmentsRequest.
type ListPartitionReassignmentsResponse struct {
	// Error is the kafka.Error the whole request failed with, or nil.
	Error error

	// Topics holds the partitions being moved, by topic name. Partitions
	// not being moved are left out.
	Topics map[string]ListPartitionReassignmentsResponseTopic
}

// ListPartitionReassignmentsResponseTopic is the moves of one topic.
type ListPartitionReassignmentsResponseTopic struct {
	Partitions []ListPartitionReassignmentsResponsePartition
}

// ListPartitionReassignmentsResponsePartition is the move of one
// partition.
type ListPartitionReassignmentsResponsePartition struct {
	// PartitionIndex is the partition's id.
	PartitionIndex int

	// Replicas is the current replica set, old and new replicas together.
	Replicas []int

	// AddingReplicas are the replicas being added, RemovingReplicas those
	// that go once the new ones are in sync.
	AddingReplicas   []int
	RemovingReplicas []int
}

// ListPartitionReassignments lists the replica moves in progress, as the
// controller knows them. The error is for the request as a whole.
func (c *Client) ListPartitionReassignments(ctx context.Context, req *ListPartitionReassignmentsRequest) (*ListPartitionReassignmentsResponse, error) {
	if req == nil {
		return nil, errors.New("listing partition reassignments: nil request")
	}
	preq := &protocol.ListPartitionReassignmentsRequest{TimeoutMs: protocol.Millis(req.Timeout)}
	for _, name := range clientSortedKeys(req.Topics) {
		preq.Topics = append(preq.Topics, protocol.ListPartitionReassignmentsRequestTopic{
			Name:             name,
			PartitionIndexes: clientIntsAs[int32](req.Topics[name].PartitionIndexes),
		})
	}

	resp, err := responseAs[*protocol.ListPartitionReassignmentsResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("listing partition reassignments: %w", err)
	}
	out := &ListPartitionReassignmentsResponse{
		Error:  makeError(resp.ErrorCode, deref(resp.ErrorMessage)),
		Topics: make(map[string]ListPartitionReassignmentsResponseTopic, len(resp.Topics)),
	}
	for _, t := range resp.Topics {
		var rt ListPartitionReassignmentsResponseTopic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, ListPartitionReassignmentsResponsePartition{
				PartitionIndex:   int(p.PartitionIndex),
				Replicas:         clientIntsAs[int](p.Replicas),
				AddingReplicas:   clientIntsAs[int](p.AddingReplicas),
				RemovingReplicas: clientIntsAs[int](p.RemovingReplicas),
			})
		}
		out.Topics[t.Name] = rt
	}
	return out, nil
}
