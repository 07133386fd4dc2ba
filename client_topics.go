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
