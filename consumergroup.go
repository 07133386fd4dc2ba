package kafka

// Consumer groups: ConsumerGroup joins a group through its coordinator and
// hands out one Generation at a time; the Reader (or any caller) consumes the
// generation's partitions with functions started by Generation.Start and
// commits with Generation.CommitOffsets. The machinery (coordinator, join,
// sync, heartbeats, commits, leaving) is internal/group's; this file is the
// public API and, at its end, the adapter that gives internal/group the
// client's cluster, balancers, errors and loggers.
//
// Unexported hooks for the Reader (same package):
//
//   - ConsumerGroupConfig.cluster: the *cluster (metadata cache, control
//     connections) to share. Nil: the group makes one from Brokers and Dialer
//     and closes it on Close; a shared one is left open.
//   - ConsumerGroupConfig.rack: the rack this member runs in. It is sent as
//     the UserData of every RackAffinityGroupBalancer whose Rack is empty, so
//     the leader can place partitions near the member. Empty: Dialer.RackID.
//   - ConsumerGroupConfig.isolationLevel: the isolation level of the
//     ListOffsets that resolves StartOffset LastOffset (ReadCommitted: the
//     last stable offset rather than the high watermark).
//   - (*Generation).commitOffsets(ctx, offsets, quiet): CommitOffsets,
//     logging a success only at Debug when quiet, and giving up once ctx
//     ends.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/rackfetch/kafka-go/internal/group"
	"github.com/rackfetch/kafka-go/protocol"
)

// ErrGroupClosed is returned by ConsumerGroup.Next when the group has already
// been closed.
var ErrGroupClosed = group.ErrClosed

// ErrGenerationEnded is returned by the context.Context given to the
// functions of Generation.Start once the generation has ended, and by
// Generation.CommitOffsets once the group has moved past the generation.
var ErrGenerationEnded = group.ErrGenerationEnded

const (
	defaultHeartbeatInterval  = 3 * time.Second
	defaultSessionTimeout     = 30 * time.Second
	defaultRebalanceTimeout   = 30 * time.Second
	defaultJoinGroupBackoff   = 5 * time.Second
	defaultRetentionTime      = group.DefaultRetentionTime // the broker's offsets.retention.minutes
	defaultPartitionWatchTime = 5 * time.Second
	defaultGroupTimeout       = 5 * time.Second
)

// ConsumerGroupConfig is a configuration object used to create new instances of
// ConsumerGroup.
type ConsumerGroupConfig struct {
	// ID is the consumer group ID. It must not be empty.
	ID string

	// The list of broker addresses used to connect to the kafka cluster. It
	// must not be empty.
	Brokers []string

	// An dialer used to open connections to the kafka server. This field is
	// optional, if nil, the default dialer is used instead.
	Dialer *Dialer

	// Topics is the list of topics that will be consumed by this group. It
	// will usually have a single value, but it is permitted to have multiple
	// for more complex use cases.
	Topics []string

	// GroupBalancers is the priority-ordered list of client-side consumer group
	// balancing strategies that will be offered to the coordinator. The first
	// strategy that all group members support will be chosen by the leader.
	//
	// Default: [Range, RoundRobin]
	GroupBalancers []GroupBalancer

	// HeartbeatInterval sets the optional frequency at which the reader sends the consumer
	// group heartbeat update.
	//
	// Default: 3s
	HeartbeatInterval time.Duration

	// PartitionWatchInterval indicates how often a reader checks for partition changes.
	// If a reader sees a partition change (such as a partition add) it will rebalance the group
	// picking up new partitions.
	//
	// Default: 5s
	PartitionWatchInterval time.Duration

	// WatchForPartitionChanges is used to inform kafka-go that a consumer group should be
	// polling the brokers and rebalancing if any partition changes happen to the topic.
	WatchPartitionChanges bool

	// SessionTimeout optionally sets the length of time that may pass without a heartbeat
	// before the coordinator considers the consumer dead and initiates a rebalance.
	//
	// Default: 30s
	SessionTimeout time.Duration

	// RebalanceTimeout optionally sets the length of time the coordinator will wait
	// for members to join as part of a rebalance. For kafka servers under higher
	// load, it may be useful to set this value higher.
	//
	// Default: 30s
	RebalanceTimeout time.Duration

	// JoinGroupBackoff optionally sets the length of time to wait before re-joining
	// the consumer group after an error. Joins are also paced by it: a join
	// never starts sooner than JoinGroupBackoff after the previous one, so a
	// generation that ends at once never makes a busy loop.
	//
	// Default: 5s
	JoinGroupBackoff time.Duration

	// RetentionTime optionally sets the length of time the consumer group will
	// be saved by the broker. -1 will disable the setting and leave the
	// retention up to the broker's offsets.retention.minutes property. By
	// default, that setting is 1 day for kafka < 2.0 and 7 days for kafka >=
	// 2.0.
	//
	// Default: -1
	RetentionTime time.Duration

	// StartOffset determines from whence the consumer group should begin
	// consuming when it finds a partition without a committed offset. If
	// non-zero, it must be set to one of FirstOffset or LastOffset.
	//
	// Default: FirstOffset
	StartOffset int64

	// If not nil, specifies a logger used to report internal changes within the
	// reader.
	Logger Logger

	// ErrorLogger is the logger used to report errors. If nil, the reader falls
	// back to using Logger instead.
	ErrorLogger Logger

	// Timeout is the network timeout used when communicating with the consumer
	// group coordinator. This value should not be too small since errors
	// communicating with the broker will generally cause a consumer group
	// rebalance, and it's undesirable that a transient network error introduce
	// that overhead. Similarly, it should not be too large or the consumer
	// group may be slow to respond to the coordinator failing over to another
	// broker.
	//
	// Default: 5s
	Timeout time.Duration

	// cluster, rack and isolationLevel are set by the Reader: see the top of
	// this file.
	cluster        *cluster
	rack           string
	isolationLevel IsolationLevel
	// failure, a group Reader's, learns each failure retried before Next
	// returns one, so that a read whose context ends meanwhile names it.
	failure *lastFailure
}

// Validate method validates ConsumerGroupConfig properties and sets relevant
// defaults.
func (config *ConsumerGroupConfig) Validate() error {
	if len(config.Brokers) == 0 && config.cluster == nil {
		return errors.New("cannot create a consumer group with an empty list of broker addresses")
	}
	if len(config.Topics) == 0 {
		return errors.New("cannot create a consumer group without a topic")
	}
	if config.ID == "" {
		return errors.New("cannot create a consumer group without an ID")
	}
	if config.Dialer == nil {
		config.Dialer = DefaultDialer
	}
	if len(config.GroupBalancers) == 0 {
		config.GroupBalancers = []GroupBalancer{RangeGroupBalancer{}, RoundRobinGroupBalancer{}}
	}
	setDefault := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	setDefault(&config.HeartbeatInterval, defaultHeartbeatInterval)
	setDefault(&config.SessionTimeout, defaultSessionTimeout)
	setDefault(&config.PartitionWatchInterval, defaultPartitionWatchTime)
	setDefault(&config.RebalanceTimeout, defaultRebalanceTimeout)
	setDefault(&config.JoinGroupBackoff, defaultJoinGroupBackoff)
	setDefault(&config.RetentionTime, defaultRetentionTime)
	setDefault(&config.Timeout, defaultGroupTimeout)

	// The durations travel as int32 milliseconds.
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"HeartbeatInterval", config.HeartbeatInterval},
		{"SessionTimeout", config.SessionTimeout},
		{"RebalanceTimeout", config.RebalanceTimeout},
		{"JoinGroupBackoff", config.JoinGroupBackoff},
		{"PartitionWatchInterval", config.PartitionWatchInterval},
		{"Timeout", config.Timeout},
	} {
		if d.v < 0 || d.v/time.Millisecond >= math.MaxInt32 {
			return fmt.Errorf("%s out of bounds: %d", d.name, d.v)
		}
	}
	if config.RetentionTime < 0 && config.RetentionTime != defaultRetentionTime {
		return fmt.Errorf("RetentionTime out of bounds: %d", config.RetentionTime)
	}
	if config.StartOffset == 0 {
		config.StartOffset = FirstOffset
	}
	if config.StartOffset != FirstOffset && config.StartOffset != LastOffset {
		return fmt.Errorf("StartOffset is not valid %d", config.StartOffset)
	}
	return nil
}

// PartitionAssignment represents the starting state of a partition that has
// been assigned to a consumer.
type PartitionAssignment struct {
	// ID is the partition ID.
	ID int

	// Offset is the initial offset at which this assignment begins: the
	// offset committed for the group, or, when none is, FirstOffset with
	// StartOffset FirstOffset, and with StartOffset LastOffset the concrete
	// end offset of the partition when it was first assigned (committed for
	// the group at once).
	Offset int64
}

// Generation represents a single consumer group generation. The generation
// carries the topic+partition assignments for the given. It also provides
// facilities for committing offsets and for running functions whose lifecycles
// are bound to the generation.
type Generation struct {
	// ID is the generation ID as assigned by the consumer group coordinator.
	ID int32

	// GroupID is the name of the consumer group.
	GroupID string

	// MemberID is the ID assigned to this consumer by the consumer group
	// coordinator.
	MemberID string

	// Assignments is the initial state of this Generation. The partition
	// assignments are grouped by topic.
	Assignments map[string][]PartitionAssignment

	gen *group.Generation
}

func newGeneration(gen *group.Generation) *Generation {
	as := make(map[string][]PartitionAssignment, len(gen.Assignments))
	for topic, ps := range gen.Assignments {
		pas := make([]PartitionAssignment, len(ps))
		for i, p := range ps {
			pas[i] = PartitionAssignment{ID: p.ID, Offset: p.Offset}
		}
		as[topic] = pas
	}
	return &Generation{ID: gen.ID, GroupID: gen.GroupID, MemberID: gen.MemberID, Assignments: as, gen: gen}
}

// Start launches the provided function in a go routine and adds accounting such
// that when the function exits, it stops the current generation (if not
// already in the process of doing so).
//
// The provided function MUST support cancellation via the ctx argument and exit
// in a timely manner once the ctx is complete. When the context is closed, the
// context's Error() function will return ErrGenerationEnded.
//
// When closing out a generation, the consumer group will wait for all functions
// launched by Start to exit before the group can move on and join the next
// generation. If the function does not exit promptly, it will stop forward
// progress for this consumer and potentially cause consumer group membership
// churn. Until they have all returned, CommitOffsets still works (the
// coordinator accepts commits of the generation until the member rejoins), so
// they may commit what they consumed on their way out.
func (g *Generation) Start(fn func(ctx context.Context)) {
	g.gen.Start(fn)
}

// CommitOffsets commits the provided topic+partition+offset combos to the
// consumer group coordinator. This can be used to reset the consumer to
// explicit offsets.
//
// The commit carries the generation's ID and member ID. Partitions the
// coordinator refused come back as kafka.Error (one code: that Error;
// several: their errors.Join, each naming its partition). Once the group has
// moved past the generation (its functions returned and it rejoined, or the
// group closed), CommitOffsets returns ErrGenerationEnded without sending.
//
// A coordinator that does not answer, moved, or is loading the group does
// not end the generation: the commit is retried (each failure logged)
// against the coordinator looked up again, until it goes through or the
// member's session ran out (SessionTimeout after the last heartbeat the
// coordinator answered), when it fails with the last error.
func (g *Generation) CommitOffsets(offsets map[string]map[int]int64) error {
	return g.gen.CommitOffsets(offsets, false)
}

// commitOffsets is CommitOffsets; quiet logs a success only at Debug, and
// it gives up with ctx's error once ctx ends.
func (g *Generation) commitOffsets(ctx context.Context, offsets map[string]map[int]int64, quiet bool) error {
	return g.gen.CommitOffsetsContext(ctx, offsets, quiet)
}

// ConsumerGroup models a Kafka consumer group. A caller doesn't interact with
// the group directly. Rather, they interact with a Generation. Every time a
// member enters or exits the group, it results in a new Generation. The
// Generation is where partition assignments and offset management occur.
// Callers will use Next to get a handle to the Generation.
type ConsumerGroup struct {
	config     ConsumerGroupConfig
	cl         *cluster
	ownCluster bool
	g          *group.Group
}

// NewConsumerGroup creates a new ConsumerGroup. It returns an error if the
// provided configuration is invalid. It does not attempt to connect to the
// Kafka cluster. That happens asynchronously, and any errors will be reported
// by Next.
func NewConsumerGroup(config ConsumerGroupConfig) (*ConsumerGroup, error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	config.Topics = append([]string(nil), config.Topics...)
	if config.failure == nil {
		config.failure = &lastFailure{}
	}
	cg := &ConsumerGroup{config: config, cl: config.cluster}
	if cg.cl == nil {
		cg.cl = newCluster(config.Dialer, config.Brokers)
		cg.ownCluster = true
	}
	cg.g = group.New(cg.groupConfig(), cg.groupDeps())
	return cg, nil
}

// Close terminates the current generation by causing this member to leave and
// releases all local resources used to participate in the consumer group.
// Close will also end the current generation if it is still active, and
// waits for the functions started on it to return before leaving.
func (cg *ConsumerGroup) Close() error {
	cg.g.Close()
	if cg.ownCluster {
		cg.cl.close()
	}
	return nil
}

// Next waits for the next consumer group generation. There will never be two
// active generations. Next will never return a new generation until the
// previous one has completed.
//
// If there are errors setting up the next generation, they will be surfaced
// here.
//
// If the ConsumerGroup has been closed, then Next will return ErrGroupClosed.
func (cg *ConsumerGroup) Next(ctx context.Context) (*Generation, error) {
	gen, err := cg.g.Next(ctx)
	if err != nil {
		return nil, err
	}
	return newGeneration(gen), nil
}

func (cg *ConsumerGroup) log(format string, args ...interface{}) {
	if l := cg.config.Logger; l != nil {
		l.Printf(format, args...)
	}
}

func (cg *ConsumerGroup) logError(format string, args ...interface{}) {
	if l := cg.config.ErrorLogger; l != nil {
		l.Printf(format, args...)
	} else {
		cg.log(format, args...)
	}
}

// The client as internal/group sees it: groupDeps gives a ConsumerGroup's
// member its cluster (coordinator and leader connections, metadata), its
// balancers, its loggers and the Reader's failure memory; groupErrors
// classifies the client's errors.

func (cg *ConsumerGroup) groupConfig() group.Config {
	c := &cg.config
	return group.Config{
		ID:                     c.ID,
		Topics:                 c.Topics,
		HeartbeatInterval:      c.HeartbeatInterval,
		SessionTimeout:         c.SessionTimeout,
		RebalanceTimeout:       c.RebalanceTimeout,
		JoinGroupBackoff:       c.JoinGroupBackoff,
		RetentionTime:          c.RetentionTime,
		PartitionWatchInterval: c.PartitionWatchInterval,
		WatchPartitionChanges:  c.WatchPartitionChanges,
		Timeout:                c.Timeout,
		StartOffset:            c.StartOffset,
		IsolationLevel:         int8(c.isolationLevel),
	}
}

func (cg *ConsumerGroup) groupDeps() group.Deps {
	d := groupDeps{cg}
	return group.Deps{Cluster: d, Balancers: d, Errors: groupErrors{}, Log: d, Failures: d}
}

// groupConn is a *Conn as internal/group's Conn; two are equal when they
// are the same connection.
type groupConn struct{ c *Conn }

func (c groupConn) RoundTrip(ctx context.Context, req protocol.Request, limit int16) (protocol.Response, int16, error) {
	return c.c.roundTrip(ctx, req, limit)
}
func (c groupConn) Close() error { return c.c.Close() }
func (c groupConn) Broken() bool { return c.c.isBroken() }

type groupDeps struct{ cg *ConsumerGroup }

func (d groupDeps) DialCoordinator(ctx context.Context) (group.CoordinatorConn, error) {
	c, err := d.cg.dialCoordinator(ctx)
	if err != nil {
		return nil, err
	}
	return groupConn{c}, nil
}

// dialCoordinator asks a broker which one coordinates the group and
// connects to it. The question goes through the cluster's control
// connections (withControlCtx): each attempt under the control deadline,
// brokers that stalled tried last (a coordinator that stopped answering is
// marked so, see CoordinatorAnswered), the next broker asked when one does
// not answer.
func (cg *ConsumerGroup) dialCoordinator(ctx context.Context) (*Conn, error) {
	var co group.Coordinator
	err := cg.cl.withControlCtx(ctx, func(rctx context.Context, c *Conn) error {
		var err error
		co, err = group.FindCoordinator(rctx, groupConn{c}, cg.config.ID, groupErrors{})
		return err
	})
	if err != nil {
		return nil, err
	}
	b := Broker{ID: co.ID, Host: co.Host, Port: co.Port}
	if known, ok := cg.cl.broker(b.ID); ok {
		b.Rack = known.Rack
	}
	addr := net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
	// A dial and ApiVersions are answered at once by a live broker: the
	// control deadline (at most 3s), not Timeout, bounds what a frozen
	// coordinator costs each lookup.
	rctx, cancel := context.WithTimeout(ctx, min(cg.config.Timeout, controlTimeout(cg.cl.dialer)))
	defer cancel()
	conn, err := cg.cl.dialer.connect(rctx, "tcp", addr, ConnConfig{Broker: b.ID, Rack: b.Rack})
	if err != nil {
		var kerr Error
		if !errors.As(err, &kerr) {
			cg.cl.markUnresponsive(addr)
		}
		return nil, fmt.Errorf("connecting to coordinator %d at %s: %w", b.ID, addr, err)
	}
	cg.log("group %s: coordinator is broker %d at %s", cg.config.ID, b.ID, addr)
	return conn, nil
}

// CoordinatorAnswered keeps the cluster's memory of unresponsive brokers:
// a coordinator that did not answer (a timeout, a broken connection), most
// likely frozen, is asked last at the next lookup (it may well keep naming
// itself), and one that answered is trusted again.
func (d groupDeps) CoordinatorAnswered(c group.CoordinatorConn, err error) {
	b, ok := d.cg.cl.broker(c.(groupConn).c.Broker().ID)
	if !ok {
		return
	}
	var kerr Error
	switch {
	case err == nil || errors.As(err, &kerr):
		d.cg.cl.markResponsive(hostPort(b))
	default:
		d.cg.cl.markUnresponsive(hostPort(b))
	}
}

func (d groupDeps) Refresh(ctx context.Context, topics ...string) error {
	return d.cg.cl.refresh(ctx, topics...)
}

func (d groupDeps) PartitionCount(topic string) (int, bool) {
	ps, ok := d.cg.cl.topicPartitions(topic)
	return len(ps), ok
}

func (d groupDeps) LeaderConn(ctx context.Context, topic string, partition int) (group.Conn, error) {
	c, _, err := d.cg.cl.leaderConn(ctx, topic, partition)
	if err != nil {
		return nil, err
	}
	return groupConn{c}, nil
}

func (d groupDeps) DropConn(c group.Conn) { d.cg.cl.dropConn(c.(groupConn).c) }

func (d groupDeps) Protocols() ([]group.Protocol, error) {
	out := make([]group.Protocol, 0, len(d.cg.config.GroupBalancers))
	for _, b := range d.cg.config.GroupBalancers {
		userData, err := d.cg.balancerUserData(b)
		if err != nil {
			return nil, fmt.Errorf("user data of group balancer %s: %w", b.ProtocolName(), err)
		}
		out = append(out, group.Protocol{Name: b.ProtocolName(), UserData: userData})
	}
	return out, nil
}

// balancerUserData is b.UserData(), except that a RackAffinityGroupBalancer
// without a Rack carries the member's rack (config.rack, else
// Dialer.RackID).
func (cg *ConsumerGroup) balancerUserData(b GroupBalancer) ([]byte, error) {
	rack := cg.config.rack
	if rack == "" && cg.config.Dialer != nil {
		rack = cg.config.Dialer.RackID
	}
	if rack != "" {
		switch rb := b.(type) {
		case RackAffinityGroupBalancer:
			if rb.Rack == "" {
				return []byte(rack), nil
			}
		case *RackAffinityGroupBalancer:
			if rb != nil && rb.Rack == "" {
				return []byte(rack), nil
			}
		}
	}
	return b.UserData()
}

func (d groupDeps) Assign(protocol string, members []group.Member, topics []string) (map[string]map[string][]int, bool) {
	balancer, ok := findGroupBalancer(protocol, d.cg.config.GroupBalancers)
	if !ok {
		return nil, false
	}
	gms := make([]GroupMember, len(members))
	for i, m := range members {
		gms[i] = GroupMember{ID: m.ID, Topics: m.Topics, UserData: m.UserData}
	}
	var partitions []Partition
	for _, t := range topics {
		ps, _ := d.cg.cl.topicPartitions(t)
		partitions = append(partitions, ps...)
	}
	return balancer.AssignGroups(gms, partitions), true
}

func (d groupDeps) Printf(format string, args ...interface{}) { d.cg.log(format, args...) }
func (d groupDeps) Errorf(format string, args ...interface{}) { d.cg.logError(format, args...) }
func (d groupDeps) Commit(quiet bool, groupID string, generationID int32, offsets, format string, args ...interface{}) {
	d.cg.logCommit(quiet, groupID, generationID, offsets, format, args...)
}

func (d groupDeps) Set(err error)             { d.cg.config.failure.set(err) }
func (d groupDeps) Clear()                    { d.cg.config.failure.clear() }
func (d groupDeps) WithCause(err error) error { return d.cg.config.failure.withCause(err) }

// groupErrors classifies the client's errors for internal/group.
type groupErrors struct{}

func (groupErrors) FromCode(code int16, message string) error { return makeError(code, message) }
func (groupErrors) Is(err error, code int16) bool             { return errors.Is(err, Error(code)) }
func (groupErrors) Kafka(err error) bool {
	var kerr Error
	return errors.As(err, &kerr)
}
func (groupErrors) Temporary(err error) bool { return isTemporary(err) }
func (groupErrors) Permanent(err error) bool { return permanentFailure(err) }
func (groupErrors) JoinFatal(err error) bool { return groupJoinErrorFatal(err) }
