package group

import (
	"context"
	"sync"
	"time"
)

// Group is one member of a consumer group. It joins generation after
// generation in a goroutine of its own until Close, then leaves.
type Group struct {
	cfg  Config
	deps Deps

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
	coord   CoordinatorConn

	// Owned by the run goroutine: the member id, kept across generations
	// until the coordinator forgets it.
	memberID string
	// protocolNames are the balancers' names the last join offered.
	protocolNames []string
}

// New starts a member of the group cfg.ID. It connects asynchronously;
// Next reports the errors.
func New(cfg Config, deps Deps) *Group {
	g := &Group{
		cfg:     cfg,
		deps:    deps,
		next:    make(chan *Generation),
		errs:    make(chan error),
		done:    make(chan struct{}),
		coordMu: make(chan struct{}, 1),
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.run()
	}()
	return g
}

// Close ends the current generation, waits for its functions to return,
// leaves the group and closes the coordinator connection.
func (g *Group) Close() {
	g.closeOnce.Do(func() {
		close(g.done)
		g.cancel()
	})
	g.wg.Wait()
}

// Next waits for the next generation; there is never more than one.
// Errors setting it up are returned here (the join is retried); ErrClosed
// once the group is closed.
func (g *Group) Next(ctx context.Context) (*Generation, error) {
	select {
	case <-g.done:
		return nil, ErrClosed
	default:
	}
	select {
	case <-ctx.Done():
		return nil, g.deps.Failures.WithCause(ctx.Err())
	case <-g.done:
		return nil, ErrClosed
	case err := <-g.errs:
		return nil, err
	case gen := <-g.next:
		return gen, nil
	}
}

func (g *Group) closing() bool {
	select {
	case <-g.done:
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
func (g *Group) run() {
	defer g.shutdown()
	var notBefore time.Time
	coordRetries := 0
	for {
		if wait := time.Until(notBefore); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-g.done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if g.closing() {
			return
		}
		started := time.Now()
		gen, err := g.nextGeneration()
		if err != nil {
			if g.closing() {
				return
			}
			g.recover(err)
			// The join is retried: only a failure no retry fixes is an error.
			if g.deps.Errors.JoinFatal(err) {
				g.deps.Log.Errorf("joining group %s failed: %v", g.cfg.ID, err)
			} else {
				g.deps.Log.Printf("joining group %s failed (retrying): %v", g.cfg.ID, err)
			}
			notBefore = time.Now().Add(g.joinRetryBackoff(err, &coordRetries))
			select {
			case <-g.done:
				return
			case g.errs <- err:
			}
			continue
		}
		coordRetries = 0
		g.deps.Failures.Clear()
		notBefore = started.Add(g.cfg.JoinGroupBackoff)
		if g.runGeneration(gen) {
			return
		}
		g.recover(gen.EndReason())
	}
}

// joinRetryBackoff is the wait before the join after a failed one. A
// coordinator that is not there yet (a fresh cluster, a coordinator moving:
// NotCoordinator, CoordinatorNotAvailable, CoordinatorLoadInProgress) is
// looked up again soon, with a wait doubling from 100ms up to
// JoinGroupBackoff; any other failure waits the full JoinGroupBackoff.
func (g *Group) joinRetryBackoff(err error, coordRetries *int) time.Duration {
	e := g.deps.Errors
	if !e.Is(err, codeNotCoordinator) && !e.Is(err, codeCoordinatorNotAvailable) && !e.Is(err, codeCoordinatorLoadInProgress) {
		*coordRetries = 0
		return g.cfg.JoinGroupBackoff
	}
	d := 100 * time.Millisecond << min(*coordRetries, 10)
	*coordRetries++
	if d > g.cfg.JoinGroupBackoff {
		d = g.cfg.JoinGroupBackoff
	}
	return d
}

// runGeneration hands gen to Next and waits for it to end; it returns true
// when the group was closed. Either way every function of gen has returned.
func (g *Group) runGeneration(gen *Generation) (closed bool) {
	select {
	case <-g.done:
		gen.close()
		return true
	case <-gen.done:
		// Ended before anyone asked for it: rejoin at once rather than
		// hand out a dead generation.
	case g.next <- gen:
		select {
		case <-g.done:
			gen.close()
			return true
		case <-gen.done:
		}
	}
	gen.close()
	g.deps.Log.Printf("generation %d of group %s ended (member %s): %v", gen.ID, gen.GroupID, gen.MemberID, gen.EndReason())
	return false
}

// recover updates the member's state after a failure: a coordinator that
// moved or failed is looked up again, and a member id the coordinator no
// longer knows is dropped so the next join gets a new one.
func (g *Group) recover(err error) {
	if err == nil {
		return
	}
	if g.coordinatorMoved(err) {
		g.dropCoordinator()
	}
	if g.deps.Errors.Is(err, codeUnknownMemberID) || g.deps.Errors.Is(err, codeFencedInstanceID) {
		g.memberID = ""
	}
}

// shutdown leaves the group (the generation was closed before) and
// closes the coordinator connection.
func (g *Group) shutdown() {
	if g.memberID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Timeout)
		if err := g.leaveGroup(ctx); err != nil {
			g.deps.Log.Errorf("leaving group %s as member %s: %v", g.cfg.ID, g.memberID, err)
		} else {
			g.deps.Log.Printf("left group %s as member %s", g.cfg.ID, g.memberID)
		}
		cancel()
		g.memberID = ""
	}
	g.dropCoordinator()
}
