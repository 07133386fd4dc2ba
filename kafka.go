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
