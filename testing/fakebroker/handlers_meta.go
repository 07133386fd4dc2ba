package fakebroker

import (
	"slices"
	"sort"

	"github.com/rackfetch/kafka-go/protocol"
)

// apiVersions advertises protocol.Implemented(), minus the overrides.
func (b *Broker) apiVersions() *protocol.ApiVersionsResponse {
	return &protocol.ApiVersionsResponse{ApiKeys: b.apiKeys()}
}

func (b *Broker) apiKeys() []protocol.ApiVersionsKey {
	vs := b.Versions()
	keys := make([]protocol.ApiVersionsKey, 0, len(vs))
	for k, r := range vs {
		keys = append(keys, protocol.ApiVersionsKey{ApiKey: k, MinVersion: r.Min, MaxVersion: r.Max})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].ApiKey < keys[j].ApiKey })
	return keys
}

// metadata lists the running brokers and the topics asked for. A partition
// whose leader is stopped has no leader (LEADER_NOT_AVAILABLE), and stopped
// replicas are offline, as Kafka's metadata cache reports them.
func (b *Broker) metadata(r *protocol.MetadataRequest, v int16) *protocol.MetadataResponse {
	c := b.cluster
	c.mu.Lock()
	clusterID := c.cfg.ClusterID
	c.mu.Unlock()
	resp := &protocol.MetadataResponse{ClusterID: &clusterID, ControllerID: -1}
	running := c.running()
	for _, br := range c.brokers {
		if !running[br.id] {
			continue
		}
		if resp.ControllerID < 0 {
			resp.ControllerID = br.id
		}
		mb := protocol.MetadataResponseBroker{NodeID: br.id, Host: br.Host(), Port: br.Port()}
		if br.rack != "" {
			rack := br.rack
			mb.Rack = &rack
		}
		resp.Brokers = append(resp.Brokers, mb)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Topics == nil {
		names := make([]string, 0, len(c.topics))
		for name := range c.topics {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			resp.Topics = append(resp.Topics, c.topicMetadata(c.topics[name], running))
		}
		return resp
	}
	for _, rt := range r.Topics {
		var t *topic
		if rt.Name == "" && v >= 12 {
			t = c.topicByID(rt.TopicID)
		} else {
			t = c.topics[rt.Name]
			if t == nil && r.AllowAutoTopicCreation && c.cfg.AutoCreateTopics {
				if c.createTopic(rt.Name, 1, min(3, len(c.brokers))) == errNone {
					t = c.topics[rt.Name]
				}
			}
		}
		if t == nil {
			mt := protocol.MetadataResponseTopic{ErrorCode: errUnknownTopicOrPartition, Name: rt.Name, TopicID: rt.TopicID}
			if rt.Name == "" && v >= 12 {
				mt.ErrorCode = errUnknownTopicID
			}
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		resp.Topics = append(resp.Topics, c.topicMetadata(t, running))
	}
	return resp
}

// running returns which brokers are up. It takes each broker's lock
// briefly: the lock order is c.mu, then a broker's mu.
func (c *Cluster) running() map[int32]bool {
	up := make(map[int32]bool, len(c.brokers))
	for _, br := range c.brokers {
		up[br.id] = br.seenUp()
	}
	return up
}

func (c *Cluster) topicMetadata(t *topic, running map[int32]bool) protocol.MetadataResponseTopic {
	mt := protocol.MetadataResponseTopic{Name: t.name, TopicID: t.id}
	for i, pt := range t.partitions {
		mp := protocol.MetadataResponsePartition{
			PartitionIndex:  int32(i),
			LeaderID:        pt.leader,
			LeaderEpoch:     pt.epoch,
			ReplicaNodes:    slices.Clone(pt.replicas),
			IsrNodes:        slices.Clone(pt.isr),
			OfflineReplicas: slices.Clone(pt.offline),
		}
		for _, id := range pt.replicas {
			if !running[id] && !slices.Contains(mp.OfflineReplicas, id) {
				mp.OfflineReplicas = append(mp.OfflineReplicas, id)
			}
		}
		if !running[pt.leader] {
			mp.ErrorCode = errLeaderNotAvailable
			mp.LeaderID = -1
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

// nodeEndpoint is the KIP-951 address of broker id, if it is up.
func (c *Cluster) nodeEndpoint(id int32) (protocol.NodeEndpoint, bool) {
	br := c.Broker(id)
	if br == nil || !br.seenUp() {
		return protocol.NodeEndpoint{}, false
	}
	ep := protocol.NodeEndpoint{NodeID: id, Host: br.Host(), Port: br.Port()}
	if br.rack != "" {
		rack := br.rack
		ep.Rack = &rack
	}
	return ep, true
}
