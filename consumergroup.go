package kafka

// Consumer groups: ConsumerGroup joins a group through its coordinator and
// hands out one Generation at a time; the Reader (or any caller) consumes the
// generation's partitions with functions started by Generation.Start and
// commits with Generation.CommitOffsets. The wire side (FindCoordinator,
// JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetFetch, OffsetCommit,
// ListOffsets) is in consumergroup_protocol.go.
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
//   - (*Generation).committedOffsets(ctx, map[topic][]partition): OffsetFetch
//     on the generation's coordinator connection; -1 where nothing is
//     committed.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// ErrGroupClosed is returned by ConsumerGroup.Next when the group has already
// been closed.
var ErrGroupClosed = errors.New("kafka: consumer group is closed")

// ErrGenerationEnded is returned by the context.Context given to the
// functions of Generation.Start once the generation has ended, and by
// Generation.CommitOffsets once the group has moved past the generation.
var ErrGenerationEnded = errors.New("kafka: consumer group generation has ended")

const (
	// groupProtocolType is the protocol type of consumers (as opposed to
	// Kafka Connect workers, say) in JoinGroup.
	groupProtocolType = "consumer"

	defaultHeartbeatInterval  = 3 * time.Second
	defaultSessionTimeout     = 30 * time.Second
	defaultRebalanceTimeout   = 30 * time.Second
	defaultJoinGroupBackoff   = 5 * time.Second
	defaultRetentionTime      = -1 * time.Millisecond // the broker's offsets.retention.minutes
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
	// the group at once, see resolveStartOffsets).
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

	group *ConsumerGroup

	// mu guards the fields below. done closes when the generation ends
	// (ended); closed is set once the group stopped waiting for the
	// generation's functions and moved on. endErr is why it ended, nil
	// when a function returned or the group closed. lastHeartbeat is when
	// the coordinator last confirmed the member (SyncGroup, then each
	// heartbeat answered without error): the broker evicts the member
	// SessionTimeout after it, so until then the generation stands even
	// while the coordinator cannot be reached.
	mu            sync.Mutex
	done          chan struct{}
	ended         bool
	closed        bool
	endErr        error
	lastHeartbeat time.Time
	routines      sync.WaitGroup
}

// genCtx is the context of Generation.Start's functions: done with the
// generation, and then failing with ErrGenerationEnded.
type genCtx struct{ g *Generation }

func (c genCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c genCtx) Done() <-chan struct{}       { return c.g.done }
func (c genCtx) Value(interface{}) interface{} {
	return nil
}
func (c genCtx) Err() error {
	select {
	case <-c.g.done:
		return ErrGenerationEnded
	default:
		return nil
	}
}

func newGeneration(cg *ConsumerGroup, id int32, memberID string) *Generation {
	return &Generation{
		ID:            id,
		GroupID:       cg.config.ID,
		MemberID:      memberID,
		group:         cg,
		done:          make(chan struct{}),
		lastHeartbeat: time.Now(),
	}
}

// sessionDeadline is when the coordinator evicts the member if no
// heartbeat gets through before.
func (g *Generation) sessionDeadline() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lastHeartbeat.Add(g.group.config.SessionTimeout)
}

func (g *Generation) heartbeatAnswered(at time.Time) {
	g.mu.Lock()
	if at.After(g.lastHeartbeat) {
		g.lastHeartbeat = at
	}
	g.mu.Unlock()
}

func (g *Generation) isEnded() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ended
}

// end ends the generation (idempotent; the first reason wins).
func (g *Generation) end(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.endLocked(err)
}

func (g *Generation) endLocked(err error) {
	if !g.ended {
		g.ended, g.endErr = true, err
		close(g.done)
	}
}

// close ends the generation and waits for the functions launched by Start.
func (g *Generation) close() {
	g.mu.Lock()
	g.endLocked(nil)
	g.mu.Unlock()
	// Start adds no routine once ended, so the wait cannot race an Add.
	g.routines.Wait()
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// endReason returns why the generation ended.
func (g *Generation) endReason() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.endErr
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
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		// Called late: the group may already have stopped waiting. The
		// function still runs, in case its caller waits on it, and sees a
		// context that is already done.
		go fn(genCtx{g})
		return
	}
	g.routines.Add(1)
	go func() {
		defer g.routines.Done()
		fn(genCtx{g})
		// One function returning ends the generation for all.
		g.end(nil)
	}()
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
	return g.commitOffsets(offsets, false)
}

// commitOffsets is CommitOffsets; quiet logs a success only at Debug.
func (g *Generation) commitOffsets(offsets map[string]map[int]int64, quiet bool) error {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return ErrGenerationEnded
	}
	if len(offsets) == 0 {
		return nil
	}
	cg := g.group
	for attempt := 1; ; attempt++ {
		var conn *Conn
		ctx, cancel := context.WithTimeout(context.Background(), cg.config.Timeout)
		conn, err := cg.coordinator(ctx)
		if err == nil {
			err = g.commit(ctx, conn, offsets)
			cg.coordinatorAnswered(conn, err)
		}
		cancel()
		if err == nil {
			if attempt > 1 {
				cg.logCommit(quiet, g, offsets, "committed offsets of group %s generation %d at attempt %d: %s", g.GroupID, g.ID, attempt, formatOffsets(offsets))
			} else {
				cg.logCommit(quiet, g, offsets, "committed offsets of group %s generation %d: %s", g.GroupID, g.ID, formatOffsets(offsets))
			}
			return nil
		}
		if !coordinatorUnreachable(err) {
			if generationOverError(err) {
				g.end(err)
			}
			cg.logError("committing offsets of group %s generation %d: %v", g.GroupID, g.ID, err)
			return err
		}
		if coordinatorMoved(err) {
			cg.dropCoordinatorConn(conn)
		}
		wait := backoff(attempt, 100*time.Millisecond, time.Second)
		if left := time.Until(g.sessionDeadline()); left < wait || cg.closing() || g.isClosed() {
			cg.logError("committing offsets of group %s generation %d failed %d times, giving up (session over or group closing): %v", g.GroupID, g.ID, attempt, err)
			return fmt.Errorf("committing offsets of group %s generation %d: %w", g.GroupID, g.ID, err)
		}
		cg.logError("committing offsets of group %s generation %d failed (attempt %d, retrying against the coordinator looked up again): %v", g.GroupID, g.ID, attempt, err)
		if !sleep(cg.ctx, wait) {
			return fmt.Errorf("committing offsets of group %s generation %d: %w", g.GroupID, g.ID, ErrGroupClosed)
		}
	}
}

func (g *Generation) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// committedOffsets reads the group's committed offsets of partitions (by
// topic) through the coordinator: -1 where none is committed.
func (g *Generation) committedOffsets(ctx context.Context, partitions map[string][]int) (map[string]map[int]int64, error) {
	conn, err := g.group.coordinator(ctx)
	if err != nil {
		return nil, err
	}
	out, err := g.group.fetchOffsets(ctx, conn, partitions)
	if err != nil && coordinatorMoved(err) {
		g.group.dropCoordinatorConn(conn)
	}
	return out, err
}

// heartbeatLoop sends a heartbeat every HeartbeatInterval. The coordinator
// saying the generation is over (a rebalance, an unknown member or
// generation) ends it at once. A heartbeat that gets no answer, or the
// coordinator moving or loading, does not: the member still owns its
// partitions until the broker would have evicted it, SessionTimeout after
// the last answered heartbeat, so the heartbeat is retried (soon, against
// the coordinator looked up again) and the generation only ends when the
// session ran out. Fetching goes on meanwhile.
func (g *Generation) heartbeatLoop(interval time.Duration) {
	cg := g.group
	g.Start(func(ctx context.Context) {
		wait := interval
		failures := 0
		var failingSince time.Time
		for {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			err := g.heartbeatOnce()
			if err == nil {
				if failures > 0 {
					cg.log("heartbeats of group %s generation %d answered again after %d failures in %v", g.GroupID, g.ID, failures, time.Since(failingSince).Round(time.Millisecond))
				}
				failures, wait = 0, interval
				continue
			}
			if ctx.Err() != nil {
				return
			}
			if !coordinatorUnreachable(err) {
				if errors.Is(err, RebalanceInProgress) {
					cg.log("group %s is rebalancing: generation %d of member %s ends", g.GroupID, g.ID, g.MemberID)
				} else {
					cg.logError("heartbeat of group %s generation %d failed: %v", g.GroupID, g.ID, err)
				}
				g.end(err)
				return
			}
			if failures == 0 {
				failingSince = time.Now()
			}
			failures++
			deadline := g.sessionDeadline()
			if !time.Now().Before(deadline) {
				err = fmt.Errorf("no heartbeat of member %s answered for the session timeout (%v): %w", g.MemberID, cg.config.SessionTimeout, err)
				cg.logError("heartbeat of group %s generation %d failed: %v", g.GroupID, g.ID, err)
				g.end(err)
				return
			}
			cg.logError("heartbeat of group %s generation %d failed (attempt %d, retrying; the member keeps its partitions for %v more): %v",
				g.GroupID, g.ID, failures, time.Until(deadline).Round(time.Millisecond), err)
			wait = min(backoff(failures, 100*time.Millisecond, interval), time.Until(deadline))
		}
	})
}

// heartbeatOnce sends one heartbeat through the coordinator (looked up
// again when needed), under a deadline that ends no later than the
// member's session.
func (g *Generation) heartbeatOnce() error {
	cg := g.group
	deadline := time.Now().Add(2 * cg.config.Timeout) // lookup, then the heartbeat
	if sd := g.sessionDeadline(); sd.Before(deadline) {
		deadline = sd
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	sent := time.Now()
	conn, err := cg.coordinator(ctx)
	if err != nil {
		return err
	}
	err = cg.heartbeat(ctx, conn, g)
	cg.coordinatorAnswered(conn, err)
	if err == nil {
		g.heartbeatAnswered(sent)
		return nil
	}
	if coordinatorMoved(err) {
		cg.dropCoordinatorConn(conn)
	}
	return err
}

// partitionWatcher polls the topics' metadata every interval and ends the
// generation when a partition count differs from baseline, so that the
// group rejoins and the leader assigns the new partitions. Metadata
// errors are only logged: the shared cluster redials by itself. Refreshes
// are not cancelled with the generation: interrupting one would break a
// control connection the Reader shares.
func (g *Generation) partitionWatcher(interval time.Duration, baseline map[string]int) {
	cg := g.group
	g.Start(func(ctx context.Context) {
		if baseline == nil {
			rctx, cancel := context.WithTimeout(context.Background(), cg.config.Timeout)
			err := cg.cl.refresh(rctx, cg.config.Topics...)
			cancel()
			if err != nil && ctx.Err() == nil {
				cg.logError("reading partitions of %v for group %s: %v", cg.config.Topics, g.GroupID, err)
			}
			baseline = cg.partitionCounts(cg.config.Topics)
		}
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			rctx, cancel := context.WithTimeout(context.Background(), cg.config.Timeout)
			err := cg.cl.refresh(rctx, cg.config.Topics...)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					cg.logError("watching partitions of %v for group %s: %v", cg.config.Topics, g.GroupID, err)
				}
				continue
			}
			for topic, n := range cg.partitionCounts(cg.config.Topics) {
				if n != baseline[topic] {
					cg.log("topic %s of group %s went from %d to %d partitions: rebalancing", topic, g.GroupID, baseline[topic], n)
					return // ends the generation
				}
			}
		}
	})
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

	next chan *Generation
	errs chan error

	// ctx is cancelled by Close, interrupting a join in progress.
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	// coordMu (a one-slot semaphore, so waiting can be cancelled) guards
	// coord, the coordinator connection (nil until found, and after it
	// failed): the run goroutine, the heartbeat loop and commits share it.
	coordMu chan struct{}
	coord   *Conn

	// Owned by the run goroutine: the member id, kept across generations
	// until the coordinator forgets it.
	memberID string
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
	cg := &ConsumerGroup{
		config:  config,
		cl:      config.cluster,
		next:    make(chan *Generation),
		errs:    make(chan error),
		done:    make(chan struct{}),
		coordMu: make(chan struct{}, 1),
	}
	if cg.cl == nil {
		cg.cl = newCluster(config.Dialer, config.Brokers)
		cg.ownCluster = true
	}
	cg.ctx, cg.cancel = context.WithCancel(context.Background())
	cg.wg.Add(1)
	go func() {
		defer cg.wg.Done()
		cg.run()
	}()
	return cg, nil
}

// Close terminates the current generation by causing this member to leave and
// releases all local resources used to participate in the consumer group.
// Close will also end the current generation if it is still active, and
// waits for the functions started on it to return before leaving.
func (cg *ConsumerGroup) Close() error {
	cg.closeOnce.Do(func() {
		close(cg.done)
		cg.cancel()
	})
	cg.wg.Wait()
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
	select {
	case <-cg.done:
		return nil, ErrGroupClosed
	default:
	}
	select {
	case <-ctx.Done():
		return nil, cg.config.failure.withCause(ctx.Err())
	case <-cg.done:
		return nil, ErrGroupClosed
	case err := <-cg.errs:
		return nil, err
	case gen := <-cg.next:
		return gen, nil
	}
}

func (cg *ConsumerGroup) closing() bool {
	select {
	case <-cg.done:
		return true
	default:
		return false
	}
}

// run joins generation after generation until Close, then leaves the group.
//
// Pacing: a join starts no sooner than JoinGroupBackoff after the previous
// one started, and JoinGroupBackoff after a failed one. Whatever ends
// generations (a broker answering RebalanceInProgress at every heartbeat,
// a caller's function returning at once, a coordinator that keeps moving),
// the member sends at most one join round per JoinGroupBackoff.
func (cg *ConsumerGroup) run() {
	defer cg.shutdown()
	var notBefore time.Time
	coordRetries := 0
	for {
		if wait := time.Until(notBefore); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-cg.done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if cg.closing() {
			return
		}
		started := time.Now()
		gen, err := cg.nextGeneration()
		if err != nil {
			if cg.closing() {
				return
			}
			cg.recover(err)
			// The join is retried: only a failure no retry fixes is an error.
			if groupJoinErrorFatal(err) {
				cg.logError("joining group %s failed: %v", cg.config.ID, err)
			} else {
				cg.log("joining group %s failed (retrying): %v", cg.config.ID, err)
			}
			notBefore = time.Now().Add(cg.joinRetryBackoff(err, &coordRetries))
			select {
			case <-cg.done:
				return
			case cg.errs <- err:
			}
			continue
		}
		coordRetries = 0
		cg.config.failure.clear()
		notBefore = started.Add(cg.config.JoinGroupBackoff)
		if cg.runGeneration(gen) {
			return
		}
		cg.recover(gen.endReason())
	}
}

// joinRetryBackoff is the wait before the join after a failed one. A
// coordinator that is not there yet (a fresh cluster, a coordinator moving:
// NotCoordinator, CoordinatorNotAvailable, CoordinatorLoadInProgress) is
// looked up again soon, with a wait doubling from 100ms up to
// JoinGroupBackoff; any other failure waits the full JoinGroupBackoff.
func (cg *ConsumerGroup) joinRetryBackoff(err error, coordRetries *int) time.Duration {
	if !errors.Is(err, NotCoordinatorForGroup) && !errors.Is(err, GroupCoordinatorNotAvailable) && !errors.Is(err, GroupLoadInProgress) {
		*coordRetries = 0
		return cg.config.JoinGroupBackoff
	}
	d := 100 * time.Millisecond << min(*coordRetries, 10)
	*coordRetries++
	if d > cg.config.JoinGroupBackoff {
		d = cg.config.JoinGroupBackoff
	}
	return d
}

// runGeneration hands gen to Next and waits for it to end; it returns true
// when the group was closed. Either way every function of gen has returned.
func (cg *ConsumerGroup) runGeneration(gen *Generation) (closed bool) {
	select {
	case <-cg.done:
		gen.close()
		return true
	case <-gen.done:
		// Ended before anyone asked for it: rejoin at once rather than
		// hand out a dead generation.
	case cg.next <- gen:
		select {
		case <-cg.done:
			gen.close()
			return true
		case <-gen.done:
		}
	}
	gen.close()
	cg.log("generation %d of group %s ended (member %s): %v", gen.ID, gen.GroupID, gen.MemberID, gen.endReason())
	return false
}

// recover updates the member's state after a failure: a coordinator that
// moved or failed is looked up again, and a member id the coordinator no
// longer knows is dropped so the next join gets a new one.
func (cg *ConsumerGroup) recover(err error) {
	if err == nil {
		return
	}
	if coordinatorMoved(err) {
		cg.dropCoordinator()
	}
	if errors.Is(err, UnknownMemberId) || errors.Is(err, FencedInstanceID) {
		cg.memberID = ""
	}
}

// nextGeneration joins the group and sets up the next generation: the
// coordinator, JoinGroup, the leader's assignment, SyncGroup, the start
// offsets, then heartbeats and the partition watcher.
func (cg *ConsumerGroup) nextGeneration() (*Generation, error) {
	ctx := cg.ctx
	conn, err := cg.coordinator(ctx)
	if err != nil {
		return nil, err
	}
	join, err := cg.joinGroup(ctx, conn)
	if err != nil {
		return nil, err
	}
	cg.log("joined group %s as member %s in generation %d (leader %s, protocol %s)",
		cg.config.ID, join.MemberID, join.GenerationID, join.Leader, join.ProtocolName)

	var plan []protocol.SyncGroupRequestAssignment
	var counts map[string]int
	if join.Leader == join.MemberID && !join.SkipAssignment {
		if plan, counts, err = cg.assignPartitions(ctx, join); err != nil {
			return nil, fmt.Errorf("assigning the partitions of group %s: %w", cg.config.ID, err)
		}
	}
	assigned, err := cg.syncGroup(ctx, conn, join, plan)
	if err != nil {
		return nil, err
	}

	gen := newGeneration(cg, join.GenerationID, join.MemberID)
	if gen.Assignments, err = cg.startOffsets(ctx, conn, gen, assigned); err != nil {
		return nil, err
	}
	cg.log("group %s generation %d: member %s has %s", cg.config.ID, gen.ID, gen.MemberID, formatAssignments(gen.Assignments))

	gen.heartbeatLoop(cg.config.HeartbeatInterval)
	if cg.config.WatchPartitionChanges {
		gen.partitionWatcher(cg.config.PartitionWatchInterval, counts)
	}
	return gen, nil
}

// startOffsets turns the partitions SyncGroup assigned (by topic) into the
// generation's Assignments: the committed offset where there is one, else
// the StartOffset policy. Topics the group does not subscribe to are left
// out; every subscribed topic has an entry, empty when nothing of it is
// assigned.
func (cg *ConsumerGroup) startOffsets(ctx context.Context, conn *Conn, gen *Generation, assigned map[string][]int) (map[string][]PartitionAssignment, error) {
	mine := make(map[string][]int, len(cg.config.Topics))
	for _, topic := range cg.config.Topics {
		if ps := assigned[topic]; len(ps) > 0 {
			mine[topic] = ps
		}
	}
	offsets := map[string]map[int]int64{}
	if len(mine) > 0 {
		var err error
		if offsets, err = cg.fetchOffsets(ctx, conn, mine); err != nil {
			return nil, fmt.Errorf("fetching the committed offsets of group %s: %w", cg.config.ID, err)
		}
		if cg.config.StartOffset == LastOffset {
			if err := cg.resolveStartOffsets(ctx, conn, gen, mine, offsets); err != nil {
				return nil, err
			}
		}
	}
	out := make(map[string][]PartitionAssignment, len(cg.config.Topics))
	for _, topic := range cg.config.Topics {
		pas := make([]PartitionAssignment, 0, len(mine[topic]))
		for _, p := range mine[topic] {
			offset, ok := offsets[topic][p]
			if !ok || offset < 0 {
				offset = cg.config.StartOffset
			}
			pas = append(pas, PartitionAssignment{ID: p, Offset: offset})
		}
		out[topic] = pas
	}
	return out, nil
}

// resolveStartOffsets fills, for StartOffset LastOffset, the partitions
// without a committed offset with their current end offset, and commits
// those offsets for the group before the generation is handed out.
//
// Handing out the relative LastOffset instead loses messages (a known
// kafka-go bug): the member would resolve "last" only when it starts
// reading; if the generation ends before its first commit, the next owner
// finds nothing committed and resolves "last" again, later, skipping every
// message produced in between. Resolving the concrete end offset once, at
// the partition leader, when the group first gets the partition, and
// committing it at once (the group is stable after SyncGroup, so the
// coordinator takes the commit), makes the starting point part of the
// group's state: every later generation reads it back with OffsetFetch.
// If the commit fails the generation is not handed out at all (the join
// is retried), so no member ever reads from an uncommitted start.
func (cg *ConsumerGroup) resolveStartOffsets(ctx context.Context, conn *Conn, gen *Generation, mine map[string][]int, offsets map[string]map[int]int64) error {
	missing := map[string][]int{}
	for topic, ps := range mine {
		for _, p := range ps {
			if o, ok := offsets[topic][p]; !ok || o < 0 {
				missing[topic] = append(missing[topic], p)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ends, err := cg.listEndOffsets(ctx, missing)
	if err != nil {
		return fmt.Errorf("resolving the last offsets of group %s: %w", cg.config.ID, err)
	}
	if err := gen.commit(ctx, conn, ends); err != nil {
		return fmt.Errorf("committing the start offsets of group %s: %w", cg.config.ID, err)
	}
	cg.log("group %s starts at the last offsets %s (committed)", cg.config.ID, formatOffsets(ends))
	for topic, ps := range ends {
		if offsets[topic] == nil {
			offsets[topic] = map[int]int64{}
		}
		for p, o := range ps {
			offsets[topic][p] = o
		}
	}
	return nil
}

// partitionCounts returns the cached partition count of each topic (0 for
// a topic the cache does not know).
func (cg *ConsumerGroup) partitionCounts(topics []string) map[string]int {
	out := make(map[string]int, len(topics))
	for _, t := range topics {
		ps, _ := cg.cl.topicPartitions(t)
		out[t] = len(ps)
	}
	return out
}

// shutdown leaves the group (the generation was closed before) and
// releases the connections.
func (cg *ConsumerGroup) shutdown() {
	if cg.memberID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), cg.config.Timeout)
		if err := cg.leaveGroup(ctx); err != nil {
			cg.logError("leaving group %s as member %s: %v", cg.config.ID, cg.memberID, err)
		} else {
			cg.log("left group %s as member %s", cg.config.ID, cg.memberID)
		}
		cancel()
		cg.memberID = ""
	}
	cg.dropCoordinator()
	if cg.ownCluster {
		cg.cl.close()
	}
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

func formatOffsets(offsets map[string]map[int]int64) string {
	var parts []string
	for topic, ps := range offsets {
		for p, o := range ps {
			parts = append(parts, fmt.Sprintf("%s/%d:%d", topic, p, o))
		}
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

func formatAssignments(as map[string][]PartitionAssignment) string {
	var parts []string
	for topic, ps := range as {
		for _, p := range ps {
			parts = append(parts, fmt.Sprintf("%s/%d@%d", topic, p.ID, p.Offset))
		}
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}
