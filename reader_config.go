package kafka

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults of ReaderConfig, applied by NewReader to zero fields.
const (
	defaultReaderQueueCapacity = 100
	defaultFetchMinBytes       = 1
	defaultFetchMaxBytes       = 1e6 // 1 MB, kafka-go's default
	defaultReaderMaxWait       = 10 * time.Second
	defaultReadBatchTimeout    = 10 * time.Second
	defaultReadLagInterval     = 1 * time.Minute
	defaultReadBackoffMin      = 100 * time.Millisecond
	defaultReadBackoffMax      = 1 * time.Second
	defaultReaderMaxAttempts   = 3
	defaultRackPreferenceTTL   = 5 * time.Minute
	defaultReplicaCooldown     = 5 * time.Minute
	defaultReplicaStallTimeout = 3 * time.Second
	defaultMaxFollowerLag      = 10 * time.Second
	minMaxFollowerLag          = time.Second
)

// ReaderConfig is a configuration object used to create new instances of
// Reader. Zero fields take the defaults documented on each.
type ReaderConfig struct {
	// The list of broker addresses used to connect to the kafka cluster.
	Brokers []string

	// GroupID holds the optional consumer group id. If GroupID is specified,
	// then Partition should NOT be specified e.g. 0
	GroupID string

	// GroupTopics allows specifying multiple topics, but can only be used in
	// combination with GroupID, as it is a consumer-group feature. As such,
	// if GroupID is set, then either Topic or GroupTopics must be defined.
	GroupTopics []string

	// The topic to read messages from.
	Topic string

	// Partition to read messages from. Either Partition or GroupID may be
	// assigned, but not both.
	Partition int

	// A dialer used to open connections to the kafka server. This field is
	// optional, if nil, the default dialer is used instead.
	Dialer *Dialer

	// The capacity of the internal message queue, defaults to 100 if none is
	// set. A partition is fetched again once no more than QueueCapacity of
	// its messages, or than its last fetch brought, wait for the
	// application (one fetch ahead), and FetchBatch returns at most
	// QueueCapacity messages at a time. MaxBufferedBytes bounds the bytes.
	QueueCapacity int

	// MaxBufferedBytes bounds the bytes (keys and values) the Reader
	// fetches ahead of the application, over all its partitions: a fetch
	// asks the broker for no more than what is left of it, and none is
	// sent while less than a quarter is left (unless nothing waits). The
	// broker may return one record batch beyond it, so that reading
	// progresses; each fetched record costs 48 bytes more until it is
	// taken. MaxBytes still bounds one partition in one fetch. All the
	// Readers of a process also share SetReaderBufferLimit (256 MiB).
	//
	// The default keeps about as much in flight as franz-go and the Java
	// consumer do (a fetch of up to fetch.max.bytes, 55 MB, per broker):
	// on a 300-partition topic of 1 KiB records, 64 MiB read at 0.7× of
	// 192 MiB's rate (bench/RESULTS.md). Lower it to trade throughput for
	// memory.
	//
	// Default: 192 MiB
	MaxBufferedBytes int

	// MinBytes indicates to the broker the minimum batch size that the
	// consumer will accept. Setting a high minimum when consuming from a
	// low-volume topic may result in delayed delivery when the broker does
	// not have enough data to satisfy the defined minimum.
	//
	// Default: 1
	MinBytes int

	// MaxBytes indicates to the broker the maximum batch size that the
	// consumer will accept. The broker still returns a first record batch
	// larger than this whole, so progress is always possible.
	//
	// Default: 1MB
	MaxBytes int

	// Maximum amount of time to wait for new data to come when fetching
	// batches of messages from kafka (the broker's long poll).
	//
	// One fetch carries the partitions of every Reader reading from a
	// broker; a partition that starts reading there while that fetch
	// waits (a new Reader, a group assignment, a move between replicas) is
	// fetched on a second, short-lived connection meanwhile. Brokers that
	// hold some fetches for the whole wait (followers before Kafka 3.4,
	// leaders before 3.3 naming a preferred replica) are long-polled for
	// at most 500 ms.
	//
	// Default: 10s
	MaxWait time.Duration

	// ReadBatchTimeout is the time allowed, beyond MaxWait, to receive a
	// fetched batch; a fetch that takes longer is abandoned and retried.
	//
	// Default: 10s
	ReadBatchTimeout time.Duration

	// ReadLagInterval sets the frequency at which the reader lag is updated.
	// Setting this field to a negative value disables lag reporting.
	ReadLagInterval time.Duration

	// GroupBalancers is the priority-ordered list of client-side consumer
	// group balancing strategies that will be offered to the coordinator.
	// The first strategy that all group members support will be chosen by
	// the leader.
	//
	// Default: [Range, RoundRobin]
	//
	// Only used when GroupID is set
	GroupBalancers []GroupBalancer

	// HeartbeatInterval sets the optional frequency at which the reader
	// sends the consumer group heartbeat update.
	//
	// Default: 3s
	//
	// Only used when GroupID is set
	HeartbeatInterval time.Duration

	// CommitInterval indicates the interval at which offsets are committed
	// to the broker. If 0, commits will be handled synchronously.
	//
	// Default: 0
	//
	// Only used when GroupID is set
	CommitInterval time.Duration

	// PartitionWatchInterval indicates how often a reader checks for
	// partition changes. If a reader sees a partition change (such as a
	// partition add) it will rebalance the group picking up new partitions.
	//
	// Default: 5s
	//
	// Only used when GroupID is set and WatchPartitionChanges is set.
	PartitionWatchInterval time.Duration

	// WatchPartitionChanges is used to inform kafka-go that a consumer group
	// should be polling the brokers and rebalancing if any partition changes
	// happen to the topic.
	WatchPartitionChanges bool

	// SessionTimeout optionally sets the length of time that may pass
	// without a heartbeat before the coordinator considers the consumer dead
	// and initiates a rebalance.
	//
	// Default: 30s
	//
	// Only used when GroupID is set
	SessionTimeout time.Duration

	// RebalanceTimeout optionally sets the length of time the coordinator
	// will wait for members to join as part of a rebalance. For kafka
	// servers under higher load, it may be useful to set this value higher.
	//
	// Default: 30s
	//
	// Only used when GroupID is set
	RebalanceTimeout time.Duration

	// JoinGroupBackoff optionally sets the length of time to wait between
	// re-joining the consumer group after an error.
	//
	// Default: 5s
	JoinGroupBackoff time.Duration

	// RetentionTime optionally sets the length of time the consumer group
	// will be saved by the broker. -1 will disable the setting and leave the
	// retention up to the broker's offsets.retention.minutes property. By
	// default, that setting is 1 day for kafka < 2.0 and 7 days for kafka
	// >= 2.0.
	//
	// Default: -1
	//
	// Only used when GroupID is set
	RetentionTime time.Duration

	// StartOffset determines from whence the consumer group should begin
	// consuming when it finds a partition without a committed offset. If
	// non-zero, it must be set to one of FirstOffset or LastOffset.
	//
	// It is also where a reader goes when its position falls below the
	// partition's first offset (retention deleted what it was about to
	// read) and OffsetOutOfRangeError is not set.
	//
	// Default: FirstOffset
	StartOffset int64

	// ReadBackoffMin optionally sets the smallest amount of time the reader
	// will wait before polling for new messages, and the first wait after
	// an error.
	//
	// Default: 100ms
	ReadBackoffMin time.Duration

	// ReadBackoffMax optionally sets the maximum amount of time the reader
	// will wait before polling for new messages; waits after consecutive
	// errors grow up to it.
	//
	// Default: 1s
	ReadBackoffMax time.Duration

	// If not nil, specifies a logger used to report internal changes within
	// the reader.
	Logger Logger

	// ErrorLogger is the logger used to report errors. If nil, the reader
	// falls back to using Logger instead.
	ErrorLogger Logger

	// IsolationLevel controls the visibility of transactional records.
	// ReadUncommitted makes all records visible. With ReadCommitted only
	// non-transactional and committed records are visible.
	IsolationLevel IsolationLevel

	// Limit of how many attempts to connect will be made before returning
	// the error. The reader keeps trying after that; the error is returned
	// once by ReadMessage/FetchMessage so the program learns about it.
	//
	// The default is to try 3 times.
	MaxAttempts int

	// OffsetOutOfRangeError indicates that the reader should return an
	// error in the event of an OffsetOutOfRange error from the partition
	// leader, rather than resetting the position. The partition is then no
	// longer read until SetOffset (or a rebalance) starts it again.
	OffsetOutOfRangeError bool

	// Rack is the client's rack (client.rack in the Java client). When set,
	// every fetch is Fetch v11+ and carries it, and the Reader follows the
	// partition leader's preferred read replica (KIP-392): it reads from an
	// in-sync replica in its own rack, going back to the leader when that
	// replica fails, falls out of the ISR, or the preference expires.
	// Offsets (first, last, by time) are always resolved at the leader.
	//
	// When it cannot take effect (no broker in the rack, no replica
	// selector on the brokers, brokers below Fetch v11) the Reader logs why
	// once at Warn, through ErrorLogger, else Logger, else slog.Default(),
	// and lists it in Stats().RackInactive.
	//
	// Empty: Dialer.RackID, if set; else every partition is read from its
	// leader.
	//
	// The client's rack is Rack on ReaderConfig (and on Writer, WriterConfig
	// or Transport should they get one) and RackID on Dialer and ConnConfig,
	// where kafka-go's ConnConfig.Rack already means the broker's rack.
	Rack string

	// RackPreferenceTTL bounds how long a preferred replica is read before
	// the leader is asked again.
	//
	// Default: 5m
	RackPreferenceTTL time.Duration

	// ReplicaCooldown caps how long a replica that failed is not read from,
	// even if a leader keeps naming it. A cooldown starts at 2 s and doubles
	// each time the same replica fails again soon after, up to this cap; it
	// ends early once metadata shows the replica back in the ISR after it
	// had left it. A broker failure (dial, disconnect, stall) cools the
	// broker down for every partition, and at its end (or when the ISR takes
	// it back) the Reader probes the broker (connects, asks its API
	// versions) before reading from it again; a partition error cools down
	// only that partition's replica.
	//
	// Default: 5m
	ReplicaCooldown time.Duration

	// ReplicaStallTimeout is how long past MaxWait a follower may take to
	// start answering a fetch before the Reader takes it as stalled (a
	// frozen process, a black-holed network) and goes back to the leader,
	// cooling the follower down. A response that has started arriving has
	// the whole ReadBatchTimeout. A leader gets the same bound while an
	// in-sync follower could serve instead (with Rack or ReplicaSelector):
	// a silent leader's partitions are then read from that follower until
	// a probe reaches the leader again; otherwise it gets ReadBatchTimeout.
	//
	// Default: 3s
	ReplicaStallTimeout time.Duration

	// ReplicaSelector picks the replica to read from when the partition
	// leader names none: for brokers without replica.selector.class, which
	// serve a Fetch v11+ from any replica they host. The leader's preferred
	// replica, when it names one, wins. RackAffinityReplicaSelector reads
	// from the in-sync replica in Rack. The routing rules of Rack hold for
	// the pick: in-sync replicas only, cooldowns, RackPreferenceTTL (the
	// leader is asked again), offsets resolved at the leader.
	//
	// Default: nil (only the leader's choice)
	ReplicaSelector ReplicaSelector
	// MaxFollowerLag bounds how stale reads from a follower may get: when
	// the reader has waited at the follower this long for records the
	// leader already had (its high watermark trails the leader's, e.g.
	// under a replication throttle), the partition goes back to the
	// leader, and to the follower again once the leader names it after
	// MaxFollowerLag/2 (a renewal of its lease: the flap damping counts
	// moves to another follower only). Like Kafka's
	// replica.lag.time.max.ms it is a time, not a message count. While a
	// partition reads from a follower, the Reader asks its leader for the
	// high watermark every MaxFollowerLag/8 (one ListOffsets per leader
	// for all such partitions), a follower's long poll lasts at most
	// MaxFollowerLag/4, and its answer must arrive within MaxFollowerLag/2
	// past the poll (ReplicaStallTimeout if longer; ReadBatchTimeout if
	// shorter), else its path counts as too slow and reads leave it until a
	// probe finds the path fast enough. Negative turns the check off; values below 1s are
	// refused (a healthy follower trails by up to 500 ms,
	// replica.fetch.wait.max.ms).
	//
	// Default (0): 10s
	MaxFollowerLag time.Duration
}

// Validate method validates ReaderConfig properties.
func (config *ReaderConfig) Validate() error {
	if len(config.Brokers) == 0 {
		return errors.New("cannot create a new kafka reader with an empty list of broker addresses")
	}
	if config.Partition < 0 || config.Partition >= math.MaxInt32 {
		return fmt.Errorf("partition number out of bounds: %d", config.Partition)
	}
	if config.MinBytes < 0 {
		return fmt.Errorf("invalid negative minimum batch size (min = %d)", config.MinBytes)
	}
	if config.MaxBytes < 0 {
		return fmt.Errorf("invalid negative maximum batch size (max = %d)", config.MaxBytes)
	}
	if config.GroupID != "" {
		if config.Partition != 0 {
			return errors.New("either Partition or GroupID may be specified, but not both")
		}
		if len(config.Topic) == 0 && len(config.GroupTopics) == 0 {
			return errors.New("either Topic or GroupTopics must be specified with GroupID")
		}
	} else if len(config.Topic) == 0 {
		return errors.New("cannot create a new kafka reader with an empty topic")
	}
	if config.MinBytes > config.MaxBytes {
		return fmt.Errorf("minimum batch size greater than the maximum (min = %d, max = %d)", config.MinBytes, config.MaxBytes)
	}
	if config.ReadBackoffMax < 0 {
		return fmt.Errorf("ReadBackoffMax out of bounds: %d", config.ReadBackoffMax)
	}
	if config.ReadBackoffMin < 0 {
		return fmt.Errorf("ReadBackoffMin out of bounds: %d", config.ReadBackoffMin)
	}
	if config.GroupID != "" && config.StartOffset != 0 && config.StartOffset != FirstOffset && config.StartOffset != LastOffset {
		return fmt.Errorf("StartOffset must be FirstOffset or LastOffset (StartOffset = %d)", config.StartOffset)
	}
	if config.RackPreferenceTTL < 0 {
		return fmt.Errorf("RackPreferenceTTL out of bounds: %v", config.RackPreferenceTTL)
	}
	if config.MaxBufferedBytes < 0 {
		return fmt.Errorf("invalid negative MaxBufferedBytes (%d)", config.MaxBufferedBytes)
	}
	if config.ReplicaStallTimeout < 0 {
		return fmt.Errorf("ReplicaStallTimeout out of bounds: %v", config.ReplicaStallTimeout)
	}
	if config.ReplicaCooldown < 0 {
		return fmt.Errorf("ReplicaCooldown out of bounds: %v", config.ReplicaCooldown)
	}
	if config.MaxFollowerLag > 0 && config.MaxFollowerLag < minMaxFollowerLag {
		return fmt.Errorf("MaxFollowerLag below %v (negative turns the check off): %v", minMaxFollowerLag, config.MaxFollowerLag)
	}
	return nil
}

// withDefaults returns config with every zero field set to its default.
func (config ReaderConfig) withDefaults() ReaderConfig {
	if config.GroupID != "" && len(config.GroupBalancers) == 0 {
		config.GroupBalancers = []GroupBalancer{RangeGroupBalancer{}, RoundRobinGroupBalancer{}}
	}
	if config.Dialer == nil {
		config.Dialer = DefaultDialer
	}
	if config.Rack == "" {
		// A Dialer with a rack makes fetches carry it; the routing must
		// then follow the preferred replica too, or a leader that names
		// one (and sends no records) would stall the partition.
		config.Rack = config.Dialer.RackID
	}
	if config.MaxBytes == 0 {
		config.MaxBytes = defaultFetchMaxBytes
	}
	if config.MinBytes == 0 {
		config.MinBytes = defaultFetchMinBytes
	}
	if config.MaxWait == 0 {
		config.MaxWait = defaultReaderMaxWait
	}
	if config.ReadBatchTimeout == 0 {
		config.ReadBatchTimeout = defaultReadBatchTimeout
	}
	if config.ReadLagInterval == 0 {
		config.ReadLagInterval = defaultReadLagInterval
	}
	if config.ReadBackoffMin == 0 {
		config.ReadBackoffMin = defaultReadBackoffMin
	}
	if config.ReadBackoffMax == 0 {
		config.ReadBackoffMax = defaultReadBackoffMax
	}
	if config.MaxBufferedBytes <= 0 {
		config.MaxBufferedBytes = defaultReaderMaxBufferedBytes
	}
	if config.QueueCapacity <= 0 {
		config.QueueCapacity = defaultReaderQueueCapacity
	}
	if config.MaxAttempts <= 0 {
		config.MaxAttempts = defaultReaderMaxAttempts
	}
	if config.StartOffset != LastOffset {
		config.StartOffset = FirstOffset
	}
	if config.RackPreferenceTTL == 0 {
		config.RackPreferenceTTL = defaultRackPreferenceTTL
	}
	if config.ReplicaCooldown == 0 {
		config.ReplicaCooldown = defaultReplicaCooldown
	}
	if config.ReplicaStallTimeout == 0 {
		config.ReplicaStallTimeout = defaultReplicaStallTimeout
	}
	if config.MaxFollowerLag == 0 {
		config.MaxFollowerLag = defaultMaxFollowerLag
	}
	return config
}

// routing returns the routing settings of the rack-aware path.
func (config *ReaderConfig) routing() routingConfig {
	return routingConfig{
		Rack:          config.Rack,
		PreferenceTTL: config.RackPreferenceTTL,
		Cooldown:      config.ReplicaCooldown,

		LeaderBackoffMin: config.ReadBackoffMin,
		LeaderBackoffMax: config.ReadBackoffMax,
		ErrorBackoffMin:  config.ReadBackoffMin,
		ErrorBackoffMax:  config.ReadBackoffMax,
		Choice:           routeChooser(config.ReplicaSelector),

		MaxFollowerLag: max(config.MaxFollowerLag, 0), // negative: off
	}
}

// followerLagSampling is how often leaders are asked while partitions
// read from followers; followerLagPoll bounds a follower's long poll.
func (config *ReaderConfig) followerLagSampling() time.Duration { return config.MaxFollowerLag / 8 }
func (config *ReaderConfig) followerLagPoll() time.Duration     { return config.MaxFollowerLag / 4 }
