// Package consumer runs the background work of a set of Readers that share
// a fetch engine: the metadata refreshes while partitions read from
// followers or replicas cool down, the leaders' high watermarks for the
// lag check, and the probes of brokers whose cooldown waits for proof that
// they are back, all over one replica cooldown cache. It runs once per set,
// keyed by what it watches (a leader, a broker), not once per Reader, so
// its cost grows with brokers and leaders, not with Readers.
//
// It does no I/O of its own: the caller gives it the requests (Config) and
// the Readers (Members); it decides when and for what to send them.
package consumer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/internal/routing"
)

// Member is what the runtime needs of one Reader of the set.
type Member[TP comparable] interface {
	// OnFollower reports whether a partition reads from a follower now.
	OnFollower() bool
	// Topics returns the topics whose partitions are read now.
	Topics() []string
	// FollowerReads returns the partitions read from a follower now, by
	// leader.
	FollowerReads() map[int][]TP
	// LeaderHighWatermark tells the Member the leader's high watermark of
	// a partition it reads from a follower, and returns whether the
	// Member's position in it is already there: nothing in flight.
	LeaderHighWatermark(tp TP, hw int64) (caughtUp bool)
}

// Config is the I/O and the settings of a Runtime.
type Config[TP comparable] struct {
	// Members returns the Readers of the set now.
	Members func() []Member[TP]
	// Refresh reads the metadata of topics.
	Refresh func(ctx context.Context, topics []string) error
	// Changes, when set, counts the changes of the metadata Refresh reads
	// into: a refresh that finds no change since the last one counted is
	// not counted either (Version), so that a stable cluster's periodic
	// re-read wakes no fetcher.
	Changes func() uint64
	// ListEnds asks leader for the high watermarks of tps in one request
	// and returns those it answered.
	ListEnds func(ctx context.Context, leader int, tps []TP) (map[TP]int64, error)
	// Dial connects to broker and negotiates its API versions, the proof a
	// probe wants.
	Dial func(ctx context.Context, broker int) error
	// Logf logs routine lines, Errorf faults.
	Logf, Errorf func(format string, args ...interface{})
	// Sampling is how often the leaders' high watermarks are read while
	// partitions read from followers (MaxFollowerLag/8); 0 reads none.
	Sampling time.Duration
	// QuietSampling bounds how far the sampling of a leader slows while
	// its high watermarks do not move (0: it never slows). See pace.
	QuietSampling time.Duration
	// PinnedInterval and CoolingInterval are how often metadata is re-read
	// while a partition reads from a follower and while a replica cools
	// down (functions: tests shorten them).
	PinnedInterval, CoolingInterval func() time.Duration
}

// Runtime is the background work of one set of Readers.
//
// Goroutines: the metadata loop and the high-watermark sampler, started
// by Start, one probe per broker whose cooldown waits for it, and the
// Members' periodic work while there is some (Every); Close stops and
// joins all of them.
type Runtime[TP comparable] struct {
	cfg       Config[TP]
	cooldowns *routing.Cooldowns

	version   atomic.Uint64 // metadata refreshes made through Refresh
	changes   atomic.Uint64 // Config.Changes at the latest one counted
	refreshed atomic.Int64  // unix nanoseconds of the latest one
	ends      leaderEnds[TP]
	paces     paces[TP]
	routes    atomic.Uint64 // bumped by RoutesChanged

	ctx  context.Context // ends at Close
	stop context.CancelFunc
	wake chan struct{} // nudges the metadata loop

	samplerWake chan struct{} // nudges the high-watermark sampler
	periodic    periodic      // the Members' own periodic work (Every)

	mu      sync.Mutex // guards started, closed and wg.Add against wg.Wait
	started bool
	closed  bool
	wg      sync.WaitGroup
}

// New returns a Runtime that does nothing until Start.
func New[TP comparable](cfg Config[TP]) *Runtime[TP] {
	ctx, stop := context.WithCancel(context.Background())
	return &Runtime[TP]{cfg: cfg, cooldowns: routing.NewCooldowns(), ctx: ctx, stop: stop,
		wake: make(chan struct{}, 1), samplerWake: make(chan struct{}, 1)}
}

// Cooldowns is the set's replica cooldown cache: a replica one Reader saw
// fail is avoided by all, and a dead broker is probed once.
func (rt *Runtime[TP]) Cooldowns() *routing.Cooldowns { return rt.cooldowns }

// Start runs the loops, once: the first Reader of the set that leaves
// leaders (a rack or a client-side replica selector) calls it. From then
// on broker-level cooldowns wait for a probe.
func (rt *Runtime[TP]) Start() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.started || rt.closed {
		return
	}
	rt.started = true
	rt.cooldowns.RequireProbe()
	rt.goLocked(rt.metadataLoop)
	if rt.cfg.Sampling > 0 {
		rt.goLocked(rt.leaderEndsLoop)
	}
}

// goLocked runs fn in a goroutine Close joins; rt.mu must be held.
func (rt *Runtime[TP]) goLocked(fn func()) {
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		fn()
	}()
}

// Close stops the loops and the probes and waits for them: the last
// Reader of the set calls it.
func (rt *Runtime[TP]) Close() {
	rt.mu.Lock()
	rt.closed = true
	rt.mu.Unlock()
	rt.stop()
	rt.wg.Wait()
}

// RoutesChanged tells the runtime that a partition of a Member moved
// between a follower and its leader, or that a Member came or went: the
// sampler looks at the Members' follower reads again instead of the ones
// it kept.
func (rt *Runtime[TP]) RoutesChanged() {
	rt.routes.Add(1)
	rt.wakeSampler()
}

// Nudge wakes the metadata loop to look again at what it must refresh: a
// partition moved, or a failure may have started a cooldown.
func (rt *Runtime[TP]) Nudge() {
	select {
	case rt.wake <- struct{}{}:
	default:
	}
}

// ErrSlowPath is what a probe (Config.Dial) returns when it reached the
// broker over a path too slow for the reads it would serve: the broker's
// cooldown goes on and it is probed again soon (routing.Cooldowns.ProbedSlow).
var ErrSlowPath = errors.New("the path to the broker is too slow for the reads it would serve")

// Probe checks, off every fetcher's path, whether broker answers again
// and reports it to the cooldowns; timeout bounds it (a frozen broker
// accepts the connection but never answers), now is the cooldowns' clock.
// The cooldowns hand each broker to one probe at a time
// (routing.Cooldowns.ProbeDue). It reports whether the broker answered to
// answered, if it did.
func (rt *Runtime[TP]) Probe(broker int, timeout time.Duration, now func() time.Time, answered func()) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return
	}
	rt.goLocked(func() {
		ctx, cancel := context.WithTimeout(rt.ctx, timeout)
		err := rt.cfg.Dial(ctx, broker)
		cancel()
		if rt.ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrSlowPath) {
			rt.cooldowns.ProbedSlow(broker, now())
			rt.cfg.Logf("kafka reader: broker %d stays left: %v", broker, err)
			return
		}
		rt.cooldowns.Probed(broker, err == nil, now())
		if err == nil {
			answered()
		}
	})
}
