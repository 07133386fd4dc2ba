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
