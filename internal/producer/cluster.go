package producer

import (
	"context"
	"strconv"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// Broker is a broker as the metadata names it (the layout of kafka.Broker,
// so the adapter converts one to the other).
type Broker struct {
	Host string
	Port int
	ID   int
	Rack string
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int
}

func (tp TopicPartition) String() string { return tp.Topic + "/" + strconv.Itoa(tp.Partition) }

// Cluster is what the Writer's runtime needs of the cluster state it
// shares with other clients: the cached metadata, and ways to reach a
// broker.
type Cluster interface {
	// Context is done when the cluster state is closed.
	Context() context.Context
	// Leader returns the cached leader of a partition.
	Leader(topic string, partition int) (Broker, error)
	// LeaderEpoch returns the cached leader's id and epoch; ok is false
	// when no leader is known.
	LeaderEpoch(topic string, partition int) (id, epoch int, ok bool)
	// Replicas appends the ids of the cached replicas of a partition.
	Replicas(dst []int, topic string, partition int) []int
	// Broker returns the cached broker with id.
	Broker(id int) (Broker, bool)
	// Brokers appends every cached broker.
	Brokers(dst []Broker) []Broker
	// MergeMetadata adds an answer read by the leader watch to the cache.
	MergeMetadata(md *protocol.MetadataResponse)
	// RefreshSince reads the metadata of topic unless a read that started
	// after since did.
	RefreshSince(ctx context.Context, topic string, since time.Time) error
	// InitProducerID asks a broker for a producer id and epoch.
	InitProducerID(ctx context.Context) (*protocol.InitProducerIdResponse, error)

	// Dials reports whether the runtime opens connections of its own
	// (Dial); otherwise every request goes through RoundTrip.
	Dials() bool
	// Dial opens a connection to b.
	Dial(ctx context.Context, b Broker) (Conn, error)
	// IdleTimeout is how long a connection of its own may stay unused.
	IdleTimeout() time.Duration
	// RoundTrip sends req to b through the custom RoundTripper.
	RoundTrip(ctx context.Context, b Broker, req protocol.Request) (protocol.Response, error)

	// Release gives the cluster state back, once the runtime is closed.
	Release()
}

// Conn is a connection of the runtime's own to a broker.
type Conn interface {
	// Produce sends a produce request; with acks=0 it waits for no
	// answer (a nil response).
	Produce(ctx context.Context, req *protocol.ProduceRequest) (protocol.Response, error)
	// RoundTrip sends req at the highest version both sides support, at
	// most limit unless it is -1.
	RoundTrip(ctx context.Context, req protocol.Request, limit int16) (protocol.Response, error)
	// Broken reports whether the connection failed.
	Broken() bool
	Close() error
}

// Codec is what the runtime needs of the Writer's message type M.
type Codec[M any] interface {
	// Size is the most m takes in a record batch: the unit of BatchBytes.
	Size(m *M) int64
	// Place sets m's topic and partition, and its time to stamp when it
	// has none.
	Place(m *M, tp TopicPartition, stamp time.Time)
	// Record returns m as a record to encode.
	Record(m *M) protocol.Record
	// Written sets what the broker answered for m: its offset (-1:
	// unknown) and, for topics using LogAppendTime, its time (-1: keep).
	Written(m *M, offset, appendTime int64)
}

// Logger prints what the runtime does (the kafka.Logger method).
type Logger interface {
	Printf(string, ...interface{})
}

// Stat names a statistic the runtime observes.
type Stat int

const (
	StatWrites         Stat = iota // produce requests
	StatMessages                   // messages sent
	StatBytes                      // bytes of the messages sent
	StatErrors                     // failed attempts
	StatRetries                    // attempts retried
	StatBatchTime                  // from a batch's first message until it is first sent
	StatBatchQueueTime             // from a batch's first message until it is closed
	StatWriteTime                  // duration of produce requests
	StatWaitTime                   // throttle time asked by brokers
	StatBatchSize                  // messages per batch
	StatBatchBytes                 // bytes per batch
)

// Stats receives the statistics of the runtime.
type Stats interface {
	Observe(s Stat, v int64)
	// ObserveLeaderRack counts the size (bytes) of an encoded record batch
	// the partition's leader in rack acknowledged (rack: the leader's
	// broker.rack in the metadata, "" when it has none). Each batch is
	// counted once, at the attempt that succeeded (with acks=0, once sent).
	ObserveLeaderRack(rack string, bytes int64)
}
