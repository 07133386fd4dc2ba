package fakebroker

import (
	"slices"

	"github.com/rackfetch/kafka-go/protocol"
)

// createTopics creates topics on any broker (Kafka forwards to the
// controller). -1 partitions means 1, -1 replication min(3, brokers).
func (b *Broker) createTopics(r *protocol.CreateTopicsRequest, v int16) *protocol.CreateTopicsResponse {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &protocol.CreateTopicsResponse{}
	for _, rt := range r.Topics {
		out := protocol.CreateTopicsResponseTopic{Name: rt.Name, NumPartitions: -1, ReplicationFactor: -1}
		parts, rf := int(rt.NumPartitions), int(rt.ReplicationFactor)
		if parts == -1 {
			parts = 1
		}
		if rf == -1 {
			rf = min(3, len(c.brokers))
		}
		if len(rt.Assignments) > 0 {
			parts, rf = len(rt.Assignments), len(rt.Assignments[0].BrokerIDs)
		}
		out.ErrorCode = c.validateTopic(rt, parts, rf)
		if out.ErrorCode == errNone && !r.ValidateOnly {
			out.ErrorCode = c.createTopic(rt.Name, parts, rf)
			if out.ErrorCode == errNone && len(rt.Assignments) > 0 {
				t := c.topics[rt.Name]
				for _, a := range rt.Assignments {
					pt := t.partitions[a.PartitionIndex]
					pt.replicas, pt.isr, pt.leader = slices.Clone(a.BrokerIDs), slices.Clone(a.BrokerIDs), a.BrokerIDs[0]
				}
			}
		}
		if out.ErrorCode == errNone {
			out.NumPartitions, out.ReplicationFactor = int32(parts), int16(rf)
			if t := c.topics[rt.Name]; t != nil && v >= 7 {
				out.TopicID = t.id
			}
		}
		resp.Topics = append(resp.Topics, out)
	}
	return resp
}

// validateTopic checks a CreateTopics entry. c.mu held.
func (c *Cluster) validateTopic(rt protocol.CreateTopicsRequestTopic, parts, rf int) int16 {
	switch {
	case c.topics[rt.Name] != nil:
		return errTopicAlreadyExists
	case rt.Name == "" || parts <= 0 || parts > 1<<16:
		return errInvalidPartitions
	case rf <= 0 || rf > len(c.brokers):
		return errInvalidReplication
	}
	seen := make([]bool, parts)
	for _, a := range rt.Assignments {
		if a.PartitionIndex < 0 || int(a.PartitionIndex) >= parts || seen[a.PartitionIndex] || len(a.BrokerIDs) != rf {
			return errInvalidReplicaAssignment
		}
		seen[a.PartitionIndex] = true
		for i, id := range a.BrokerIDs {
			if c.Broker(id) == nil || slices.Contains(a.BrokerIDs[:i], id) {
				return errInvalidReplicaAssignment
			}
		}
	}
	return errNone
}

// deleteTopics deletes by name (v0-5) or by name or id (v6+).
func (b *Broker) deleteTopics(r *protocol.DeleteTopicsRequest, v int16) *protocol.DeleteTopicsResponse {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &protocol.DeleteTopicsResponse{}
	del := func(name string, id [16]byte) protocol.DeleteTopicsResponseTopic {
		out := protocol.DeleteTopicsResponseTopic{Name: name, TopicID: id}
		t := c.topics[name]
		if name == "" {
			t = c.topicByID(id)
		}
		switch {
		case t == nil && name == "":
			out.ErrorCode = errUnknownTopicID
		case t == nil:
			out.ErrorCode = errUnknownTopicOrPartition
		default:
			out.Name, out.TopicID = t.name, t.id
			delete(c.topics, t.name)
		}
		return out
	}
	if v < 6 {
		for _, name := range r.TopicNames {
			resp.Responses = append(resp.Responses, del(name, [16]byte{}))
		}
		return resp
	}
	for _, rt := range r.Topics {
		resp.Responses = append(resp.Responses, del(rt.Name, rt.TopicID))
	}
	return resp
}
