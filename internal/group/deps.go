package group

import (
	"context"
	"errors"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// ErrClosed is returned by Next once the group is closed, and by a commit
// interrupted by Close.
var ErrClosed = errors.New("kafka: consumer group is closed")

// ErrGenerationEnded is the error of the context of a generation's
// functions once it ended, and of a commit once the group moved past it.
var ErrGenerationEnded = errors.New("kafka: consumer group generation has ended")

const (
	// ProtocolType is the protocol type of consumers (as opposed to Kafka
	// Connect workers, say) in JoinGroup.
	ProtocolType = "consumer"

	// DefaultRetentionTime leaves the retention of committed offsets to the
	// broker (offsets.retention.minutes).
	DefaultRetentionTime = -1 * time.Millisecond

	// FirstOffset and LastOffset are the StartOffset policies (and
	// ListOffsets' timestamps): the partition's start or its end.
	FirstOffset int64 = -2
	LastOffset  int64 = -1
)

// Config is a validated ConsumerGroupConfig, with defaults applied.
type Config struct {
	ID                     string
	Topics                 []string
	HeartbeatInterval      time.Duration
	SessionTimeout         time.Duration
	RebalanceTimeout       time.Duration
	JoinGroupBackoff       time.Duration
	RetentionTime          time.Duration
	PartitionWatchInterval time.Duration
	WatchPartitionChanges  bool
	Timeout                time.Duration
	// StartOffset is FirstOffset or LastOffset.
	StartOffset int64
	// IsolationLevel is ListOffsets' (1: read committed) when LastOffset
	// is resolved.
	IsolationLevel int8
}

// Deps is what a member needs of its client. A single adapter may
// implement every interface.
type Deps struct {
	Cluster   Cluster
	Balancers Balancers
	Errors    Errors
	Log       Log
	Failures  Failures
}

// Conn sends requests to one broker at the highest version both sides
// implement, at most limit (-1: no limit), and returns the version used.
type Conn interface {
	RoundTrip(ctx context.Context, req protocol.Request, limit int16) (protocol.Response, int16, error)
}

// CoordinatorConn is the member's own connection to the coordinator.
type CoordinatorConn interface {
	Conn
	Close() error
	// Broken reports a connection that failed (a request that timed out
	// closes it): the coordinator must be dialed again.
	Broken() bool
}

// Cluster is the client's cluster: its metadata cache and connections.
type Cluster interface {
	// DialCoordinator looks up the group's coordinator (FindCoordinator,
	// see FindCoordinator) and connects to it.
	DialCoordinator(ctx context.Context) (CoordinatorConn, error)
	// CoordinatorAnswered notes the outcome of a request to the
	// coordinator on c: a broker that did not answer is asked last at the
	// next lookup, one that answered is trusted again.
	CoordinatorAnswered(c CoordinatorConn, err error)
	// Refresh reads the topics' metadata into the cache.
	Refresh(ctx context.Context, topics ...string) error
	// PartitionCount returns a topic's cached partition count, false when
	// the cache does not know the topic.
	PartitionCount(topic string) (int, bool)
	// LeaderConn returns the control connection to a partition's leader.
	// The same connection compares equal.
	LeaderConn(ctx context.Context, topic string, partition int) (Conn, error)
	// DropConn closes a control connection that failed.
	DropConn(c Conn)
}

// Member is one member of the group, as the leader sees it in JoinGroup.
type Member struct {
	ID       string
	Topics   []string
	UserData []byte
}

// Protocol is a JoinGroup protocol: a balancer's name and this member's
// user data for it.
type Protocol struct {
	Name     string
	UserData []byte
}

// Balancers are the group's balancers, in priority order.
type Balancers interface {
	// Protocols returns each balancer's name and user data.
	Protocols() ([]Protocol, error)
	// Assign runs the balancer named protocol over members and the cached
	// partitions of topics: member ID → topic → partitions. False when no
	// balancer has that name.
	Assign(protocol string, members []Member, topics []string) (map[string]map[string][]int, bool)
}

// Errors classifies the client's errors, whose type this package does
// not know.
type Errors interface {
	// FromCode turns a protocol error code (and the message a response
	// may carry) into the client's error; nil for 0.
	FromCode(code int16, message string) error
	// Is reports whether err's chain holds the error of code.
	Is(err error, code int16) bool
	// Kafka reports whether err's chain holds an error a broker sent.
	Kafka(err error) bool
	// Temporary reports errors worth retrying.
	Temporary(err error) bool
	// Permanent reports failures to reach the cluster no retry fixes.
	Permanent(err error) bool
	// JoinFatal reports join failures the application must see.
	JoinFatal(err error) bool
}

// Log takes the member's log lines.
type Log interface {
	Printf(format string, args ...interface{})
	Errorf(format string, args ...interface{})
	// Commit logs a commit (offsets formatted): a quiet one (one per
	// synchronous commit) only at debug level, else as Printf.
	Commit(quiet bool, groupID string, generationID int32, offsets string, format string, args ...interface{})
}

// Failures learns each failure retried before Next returns one, so that a
// caller whose context ends meanwhile can be told why nothing came.
type Failures interface {
	Set(err error)
	Clear()
	// WithCause adds the last failure to err, the caller's context ending.
	WithCause(err error) error
}

// Error codes of the group protocol.
const (
	codeRequestTimedOut           int16 = 7
	codeCoordinatorLoadInProgress int16 = 14
	codeCoordinatorNotAvailable   int16 = 15
	codeNotCoordinator            int16 = 16
	codeIllegalGeneration         int16 = 22
	codeUnknownMemberID           int16 = 25
	codeRebalanceInProgress       int16 = 27
	codeGroupAuthorizationFailed  int16 = 30
	codeMemberIDRequired          int16 = 79
	codeFencedInstanceID          int16 = 82
)
