// Package kafka is a Kafka client with the API of
// github.com/segmentio/kafka-go (Reader, Writer, Conn, Dialer, Client,
// ConsumerGroup, Transport): programs switch by changing the import path,
// and compat/ checks every exported name against kafka-go v0.4.51.
//
// It adds rack-aware follower fetching (KIP-392). Set ReaderConfig.Rack (or
// Dialer.RackID) to the client's rack, as the brokers spell broker.rack.
// Every fetch carries it; a leader whose brokers run with
// replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector
// (Kafka 2.4+) names an in-sync replica in that rack, and the Reader reads
// from it between batches, going back to the leader when the replica fails,
// stalls or leaves the ISR. Reader.Stats().Routing shows where each partition
// is read and how many bytes stayed in the rack. Writes always go to leaders.
// Package rackdetect finds the rack on EC2, GCE, Azure and Kubernetes.
//
// The README (https://github.com/rackfetch/kafka-go#readme) covers broker
// settings for Amazon MSK, Strimzi and Confluent, what follower reads cost
// in latency, and the supported Kafka versions; DESIGN.md the internals.
package kafka

// libraryVersion is sent to brokers in ApiVersions.
const libraryVersion = "0.1.0"

// Broker represents a kafka broker in a kafka cluster.
type Broker struct {
	Host string
	Port int
	ID   int
	Rack string
}

// Topic represents a topic in a kafka cluster.
type Topic struct {
	// Name of the topic.
	Name string

	// True if the topic is internal.
	Internal bool

	// The list of partition currently available on this topic.
	Partitions []Partition

	// An error that may have occurred while attempting to read the topic
	// metadata; errors.Is matches it against kafka.Error codes.
	Error error
}

// Partition carries the metadata associated with a kafka partition.
type Partition struct {
	// Name of the topic that the partition belongs to, and its index in the
	// topic.
	Topic string
	ID    int

	// Leader, replicas, and ISR for the partition. A broker that is not
	// currently known to the cluster has only its ID set.
	Leader   Broker
	Replicas []Broker
	Isr      []Broker

	// OfflineReplicas is available with metadata v5+.
	OfflineReplicas []Broker

	// LeaderEpoch is the epoch of the current leader (metadata v7+, -1
	// when unknown). Fetches carry it so a stale replica is fenced.
	LeaderEpoch int

	// An error that may have occurred while attempting to read the partition
	// metadata; errors.Is matches it against kafka.Error codes.
	Error error
}

// positiveOr returns v, or def when v is zero or negative: how kafka-go's
// Writer and Transport fields take their defaults.
func positiveOr[T ~int | ~int32 | ~int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
