package metadata

import (
	"sort"

	"github.com/rackfetch/kafka-go/protocol"
)

// Broker is a broker as metadata names it. It has the fields of
// kafka.Broker, in the same order, so either converts to the other.
type Broker struct {
	Host string
	Port int
	ID   int
	Rack string
}

// Partition is one partition as metadata describes it: kafka.Partition
// with the error left as its code.
type Partition struct {
	Topic string
	ID    int

	// A broker that the answer does not list has only its ID set.
	Leader          Broker
	Replicas        []Broker
	Isr             []Broker
	OfflineReplicas []Broker

	LeaderEpoch int // -1 when unknown (Metadata before v7)
	ErrorCode   int16
}

// MakeBroker converts a broker of a Metadata answer.
func MakeBroker(b protocol.MetadataResponseBroker) Broker {
	br := Broker{ID: int(b.NodeID), Host: b.Host, Port: int(b.Port)}
	if b.Rack != nil {
		br.Rack = *b.Rack
	}
	return br
}

// MakePartitions converts one topic of a Metadata answer, in partition id
// order. Replicas that are not among the answer's brokers (offline) carry
// only their ID.
func MakePartitions(md *protocol.MetadataResponse, t *protocol.MetadataResponseTopic) []Partition {
	brokers := make(map[int32]Broker, len(md.Brokers))
	for _, b := range md.Brokers {
		brokers[b.NodeID] = MakeBroker(b)
	}
	lookup := func(ids []int32) []Broker {
		if len(ids) == 0 {
			return nil
		}
		out := make([]Broker, len(ids))
		for i, id := range ids {
			if b, ok := brokers[id]; ok {
				out[i] = b
			} else {
				out[i] = Broker{ID: int(id)}
			}
		}
		return out
	}
	ps := make([]Partition, len(t.Partitions))
	for i, p := range t.Partitions {
		leader, ok := brokers[p.LeaderID]
		if !ok {
			leader = Broker{ID: int(p.LeaderID)}
		}
		ps[i] = Partition{
			Topic:           t.Name,
			ID:              int(p.PartitionIndex),
			Leader:          leader,
			Replicas:        lookup(p.ReplicaNodes),
			Isr:             lookup(p.IsrNodes),
			OfflineReplicas: lookup(p.OfflineReplicas),
			LeaderEpoch:     int(p.LeaderEpoch),
			ErrorCode:       p.ErrorCode,
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	return ps
}

// Request is a Metadata request for topics (nil: every topic, empty:
// brokers only).
func Request(topics []string, autoCreate bool) *protocol.MetadataRequest {
	req := &protocol.MetadataRequest{AllowAutoTopicCreation: autoCreate}
	if topics != nil {
		req.Topics = make([]protocol.MetadataRequestTopic, len(topics))
		for i, t := range topics {
			req.Topics[i].Name = t
		}
	}
	return req
}
