package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// consumerRuntime is the background work of the Readers sharing an engine
// (reader_engine_share.go): the metadata refreshes while partitions read
// from followers or replicas cool down, the leaders' high watermarks for
// the lag check, the replica cooldowns and their probes, and the rack
// check. It runs once per share, keyed by what it watches (a leader, a
// broker), not once per Reader: 300 partition Readers of one share send
// what one sends (per Reader, they sent 80 requests/s to each broker out
// of their rack while idle). A group Reader has a share, so a runtime, of
// its own.
//
// The Readers of a share register with it (engineShare.readers) when they
// start and leave when they close; their fetchers read its state through
// the Reader's pointers (meta, cooldown, rack, leaderEnds). The last
// Reader out stops it and joins its goroutines.
type consumerRuntime struct {
	share *engineShare // the Readers and the cluster view watched

	meta       readerMetadata // reader_metadata.go
	cooldown   *cooldownCache // one per share: a dead broker is probed once
	rack       rackCheck      // reader_rack_check.go
	leaderEnds leaderEnds     // follower_lag_sampler.go
	sampling   time.Duration  // MaxFollowerLag/8 (engineKey): 0 samples nothing

	ctx  context.Context // ends when the last Reader leaves
	stop context.CancelFunc
	wake chan struct{} // nudges the metadata loop: a route or cooldown changed

	mu      sync.Mutex // guards started, closed and wg.Add against wg.Wait
	started bool       // the loops run (a Reader with a rack or a ReplicaSelector came)
	closed  bool
	wg      sync.WaitGroup // the loops and the probes
}

func newConsumerRuntime(s *engineShare, cfg *ReaderConfig) *consumerRuntime {
	ctx, stop := context.WithCancel(context.Background())
	rt := &consumerRuntime{share: s, cooldown: newCooldownCache(), ctx: ctx, stop: stop, wake: make(chan struct{}, 1)}
	if cfg.MaxFollowerLag > 0 {
		rt.sampling = cfg.followerLagSampling()
	}
	return rt
}

// start runs the loops for r's share once a Reader that leaves leaders
// (a rack or a ReplicaSelector) has joined it.
func (rt *consumerRuntime) start(r *Reader) {
	if r.config.Rack == "" && r.config.ReplicaSelector == nil {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.started || rt.closed {
		return
	}
	rt.started = true
	rt.cooldown.RequireProbe()
	rt.goLocked(rt.metadataLoop)
	if rt.sampling > 0 {
		rt.goLocked(rt.leaderEndsLoop)
	}
}

// goLocked runs fn in a goroutine Close joins; rt.mu must be held.
func (rt *consumerRuntime) goLocked(fn func()) {
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		fn()
	}()
}

// close stops the loops and probes and waits for them.
func (rt *consumerRuntime) close() {
	rt.mu.Lock()
	rt.closed = true
	rt.mu.Unlock()
	rt.stop()
	rt.wg.Wait()
}

// nudge wakes the metadata loop to look again at what it must refresh.
func (rt *consumerRuntime) nudge() {
	select {
	case rt.wake <- struct{}{}:
	default:
	}
}

// logf and errorf log through a Reader of the share.
func (rt *consumerRuntime) logf(format string, args ...interface{}) {
	if r := rt.share.anyMember(); r != nil {
		r.logf(format, args...)
	}
}

func (rt *consumerRuntime) errorf(format string, args ...interface{}) {
	if r := rt.share.anyMember(); r != nil {
		r.errorf(format, args...)
	}
}

// probe checks, off every fetcher's path, whether broker b answers again
// and reports it to the cooldowns (routing.Cooldowns.RequireProbe): the
// cooldowns hand each broker to one probe at a time, so a dead broker is
// dialed by one probe per share. Connecting and negotiating API versions
// is the proof: a killed broker refuses the connection, a frozen one never
// answers (timeout bounds it). logf says when it answers.
func (rt *consumerRuntime) probe(b Broker, known bool, timeout time.Duration, now func() time.Time, logf func(string, ...interface{})) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return
	}
	rt.goLocked(func() {
		err := fmt.Errorf("no address known for broker %d", b.ID)
		if known {
			ctx, cancel := context.WithTimeout(rt.ctx, timeout)
			var c *Conn
			c, err = rt.share.cluster.dialer.dialBroker(ctx, "tcp", b, Partition{})
			cancel()
			if err == nil {
				c.Close()
			}
		}
		if rt.ctx.Err() != nil {
			return
		}
		rt.cooldown.Probed(b.ID, err == nil, now())
		if err == nil {
			logf("kafka reader: broker %d (rack %s) answers again: reads may return to it", b.ID, rackName(b.Rack))
		}
	})
}

// members returns the Readers of the share now.
func (rt *consumerRuntime) members() []*Reader { return rt.share.members() }
