package kafka

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/rackfetch/kafka-go/internal/metadata"
	"github.com/rackfetch/kafka-go/protocol"
)

// The cluster's metadata is the process's one view of it, a
// metadata.Cache shared by every cluster with the same bootstrap
// addresses (see internal/metadata). These methods read it in the public
// types; none copies more than the cache itself hands out.

// The public Broker converts to and from metadata.Broker: the two have
// the same fields, which publicBrokers relies on.
var _ = Broker(metadata.Broker{})

// publicBrokers views brokers of the cache as public ones, without a copy
// (they share their memory, as the cache's Partition values always did).
func publicBrokers(bs []metadata.Broker) []Broker {
	if bs == nil {
		return nil
	}
	return unsafe.Slice((*Broker)(unsafe.Pointer(unsafe.SliceData(bs))), len(bs))
}

// publicPartition converts a partition of the cache without allocating.
func publicPartition(p metadata.Partition) Partition {
	return Partition{
		Topic:           p.Topic,
		ID:              p.ID,
		Leader:          Broker(p.Leader),
		Replicas:        publicBrokers(p.Replicas),
		Isr:             publicBrokers(p.Isr),
		OfflineReplicas: publicBrokers(p.OfflineReplicas),
		LeaderEpoch:     p.LeaderEpoch,
		Error:           errorFromCode(p.ErrorCode),
	}
}

// partition returns the cached metadata of one partition.
func (cl *cluster) partition(topic string, id int) (Partition, bool) {
	p, ok := cl.meta.Partition(topic, id)
	if !ok {
		return Partition{}, false
	}
	return publicPartition(p), true
}

// topicPartitions returns the cached partitions of topic, in id order.
func (cl *cluster) topicPartitions(topic string) ([]Partition, bool) {
	ps, ok := cl.meta.TopicPartitions(topic)
	if !ok {
		return nil, false
	}
	out := make([]Partition, len(ps))
	for i, p := range ps {
		out[i] = publicPartition(p)
	}
	return out, true
}

// broker returns a cached broker.
func (cl *cluster) broker(id int) (Broker, bool) {
	b, ok := cl.meta.Broker(id)
	return Broker(b), ok
}

// brokerList returns the cached brokers.
func (cl *cluster) brokerList() []Broker { return publicBrokers(cl.meta.Brokers()) }

// eachBroker calls fn with every cached broker, under the cache's lock: fn
// must not call the cache.
func (cl *cluster) eachBroker(fn func(Broker)) {
	cl.meta.EachBroker(func(b metadata.Broker) { fn(Broker(b)) })
}

// brokerRacks returns the rack of every broker seen in metadata.
func (cl *cluster) brokerRacks() map[int]string { return cl.meta.Racks() }

// listedBrokers returns the IDs of the brokers the latest Metadata answer
// listed (every broker the answering one knows alive).
func (cl *cluster) listedBrokers() []int { return cl.meta.Listed() }

// topicID returns the topic ID of topic's cached partitions and its
// generation (see metadata.Cache.TopicID).
func (cl *cluster) topicID(topic string) (id [16]byte, generation int) {
	return cl.meta.TopicID(topic)
}

// partitionCount returns how many partitions of topic the cache knows.
func (cl *cluster) partitionCount(topic string) (int, bool) { return cl.meta.PartitionCount(topic) }

// readAt reports when topic was last read (zero: never).
func (cl *cluster) readAt(topic string) time.Time { return cl.meta.ReadAt(topic) }

// mergeAnswer merges a Metadata answer read elsewhere into the cache.
func (cl *cluster) mergeAnswer(md *protocol.MetadataResponse) { cl.meta.MergeAnswer(md) }

// credentials names who connections dialed by d are (for metadata.Ask.Who):
// the SASL identity and the TLS settings. Two mechanism values print the
// same only when they hold the same settings; TLS settings are the same
// only as the same *tls.Config (a request over another TLS setup may fail
// where this one would not: a client must never get the error of another
// client's certificates or missing TLS). The string never leaves the
// process.
func credentials(d *Dialer) string {
	if d == nil {
		return ""
	}
	who := ""
	if d.SASLMechanism != nil {
		who = fmt.Sprintf("%T:%+v", d.SASLMechanism, d.SASLMechanism)
	}
	if d.TLS != nil {
		who += fmt.Sprintf("\x04tls:%p", d.TLS)
	}
	return who
}
