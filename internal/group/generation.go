package group

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
)

// Assignment is an assigned partition and the offset it starts at.
type Assignment struct {
	ID     int
	Offset int64
}

// Generation is one generation of the group: its assignment and the
// functions that run for its lifetime.
type Generation struct {
	ID          int32
	GroupID     string
	MemberID    string
	Assignments map[string][]Assignment

	group *Group

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
	// afters: what contexts derived from genCtx run when the generation
	// ends (genCtx.AfterFunc), by registration.
	afters   map[uint64]func()
	afterSeq uint64
}

// genCtx is the context of Start's functions: done with the generation,
// and then failing with ErrGenerationEnded.
type genCtx struct{ g *Generation }

func (c genCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c genCtx) Done() <-chan struct{}       { return c.g.done }
func (c genCtx) Value(interface{}) interface{} {
	return nil
}

// AfterFunc runs f in a goroutine of its own once the generation ends;
// stop unregisters it, reporting whether it did (context.AfterFunc's
// contract). The context package uses it for the contexts derived from a
// genCtx (a fetcher's per partition): without it, each would keep a
// goroutine waiting for Done for the generation's life.
func (c genCtx) AfterFunc(f func()) (stop func() bool) {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		go f()
		return func() bool { return false }
	}
	if g.afters == nil {
		g.afters = map[uint64]func(){}
	}
	g.afterSeq++
	id := g.afterSeq
	g.afters[id] = f
	return func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		if _, ok := g.afters[id]; !ok {
			return false
		}
		delete(g.afters, id)
		return true
	}
}

func (c genCtx) Err() error {
	select {
	case <-c.g.done:
		return ErrGenerationEnded
	default:
		return nil
	}
}

func newGeneration(g *Group, id int32, memberID string) *Generation {
	return &Generation{
		ID:            id,
		GroupID:       g.cfg.ID,
		MemberID:      memberID,
		group:         g,
		done:          make(chan struct{}),
		lastHeartbeat: time.Now(),
	}
}

// Done is closed when the generation ends.
func (gen *Generation) Done() <-chan struct{} { return gen.done }

// sessionDeadline is when the coordinator evicts the member if no
// heartbeat gets through before.
func (gen *Generation) sessionDeadline() time.Time {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	return gen.lastHeartbeat.Add(gen.group.cfg.SessionTimeout)
}

func (gen *Generation) heartbeatAnswered(at time.Time) {
	gen.mu.Lock()
	if at.After(gen.lastHeartbeat) {
		gen.lastHeartbeat = at
	}
	gen.mu.Unlock()
}

// end ends the generation (idempotent; the first reason wins).
func (gen *Generation) end(err error) {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	gen.endLocked(err)
}

func (gen *Generation) endLocked(err error) {
	if !gen.ended {
		gen.ended, gen.endErr = true, err
		close(gen.done)
		for _, f := range gen.afters {
			go f()
		}
		gen.afters = nil
	}
}

// close ends the generation and waits for the functions launched by Start.
func (gen *Generation) close() {
	gen.mu.Lock()
	gen.endLocked(nil)
	gen.mu.Unlock()
	// Start adds no routine once ended, so the wait cannot race an Add.
	gen.routines.Wait()
	gen.mu.Lock()
	gen.closed = true
	gen.mu.Unlock()
}

func (gen *Generation) isClosed() bool {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	return gen.closed
}

// EndReason returns why the generation ended (nil while it runs, and when
// a function returned or the group closed).
func (gen *Generation) EndReason() error {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	return gen.endErr
}

// Start runs fn in a goroutine with a context that ends with the
// generation; fn returning ends the generation. The group waits for every
// fn before it joins the next generation. Called after the generation
// ended, fn still runs, with a context already done.
func (gen *Generation) Start(fn func(ctx context.Context)) {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if gen.ended {
		// Called late: the group may already have stopped waiting. The
		// function still runs, in case its caller waits on it, and sees a
		// context that is already done.
		go fn(genCtx{gen})
		return
	}
	gen.routines.Add(1)
	go func() {
		defer gen.routines.Done()
		fn(genCtx{gen})
		// One function returning ends the generation for all.
		gen.end(nil)
	}()
}

// CommitOffsets commits offsets (topic → partition → offset) for the
// generation; quiet logs a success only at debug level. Once the group
// moved past the generation it returns ErrGenerationEnded without
// sending. A coordinator that does not answer, moved, or is loading the
// group does not end the generation: the commit is retried against the
// coordinator looked up again until it goes through or the member's
// session ran out.
func (gen *Generation) CommitOffsets(offsets map[string]map[int]int64, quiet bool) error {
	return gen.CommitOffsetsContext(context.Background(), offsets, quiet)
}

// CommitOffsetsContext is CommitOffsets that also gives up, with ctx's
// error, once ctx ends: a caller's deadline bounds a commit it waits for.
func (gen *Generation) CommitOffsetsContext(ctx context.Context, offsets map[string]map[int]int64, quiet bool) error {
	if gen.isClosed() {
		return ErrGenerationEnded
	}
	if len(offsets) == 0 {
		return nil
	}
	g := gen.group
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
		conn, err := g.coordinator(actx)
		if err == nil {
			err = gen.commit(actx, conn, offsets)
			g.coordinatorAnswered(conn, err)
		}
		cancel()
		if err == nil {
			fo := formatOffsets(offsets)
			if attempt > 1 {
				g.deps.Log.Commit(quiet, gen.GroupID, gen.ID, fo, "committed offsets of group %s generation %d at attempt %d: %s", gen.GroupID, gen.ID, attempt, fo)
			} else {
				g.deps.Log.Commit(quiet, gen.GroupID, gen.ID, fo, "committed offsets of group %s generation %d: %s", gen.GroupID, gen.ID, fo)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("committing offsets of group %s generation %d: %w", gen.GroupID, gen.ID, ctx.Err())
		}
		if !g.coordinatorUnreachable(err) {
			if g.generationOverError(err) {
				gen.end(err)
			}
			g.deps.Log.Errorf("committing offsets of group %s generation %d: %v", gen.GroupID, gen.ID, err)
			return err
		}
		if g.coordinatorMoved(err) {
			g.dropCoordinatorConn(conn)
		}
		wait := retry.Backoff(attempt, 100*time.Millisecond, time.Second)
		if left := time.Until(gen.sessionDeadline()); left < wait || g.closing() || gen.isClosed() {
			g.deps.Log.Errorf("committing offsets of group %s generation %d failed %d times, giving up (session over or group closing): %v", gen.GroupID, gen.ID, attempt, err)
			return fmt.Errorf("committing offsets of group %s generation %d: %w", gen.GroupID, gen.ID, err)
		}
		g.deps.Log.Printf("committing offsets of group %s generation %d failed (attempt %d, retrying against the coordinator looked up again): %v", gen.GroupID, gen.ID, attempt, err)
		if err := sleepBoth(g.ctx, ctx, wait); err != nil {
			if g.ctx.Err() != nil {
				err = ErrClosed
			}
			return fmt.Errorf("committing offsets of group %s generation %d: %w", gen.GroupID, gen.ID, err)
		}
	}
}

// CommittedOffsets reads the group's committed offsets of partitions (by
// topic) through the coordinator: -1 where none is committed.
func (gen *Generation) CommittedOffsets(ctx context.Context, partitions map[string][]int) (map[string]map[int]int64, error) {
	g := gen.group
	conn, err := g.coordinator(ctx)
	if err != nil {
		return nil, err
	}
	out, err := g.fetchOffsets(ctx, conn, partitions)
	if err != nil && g.coordinatorMoved(err) {
		g.dropCoordinatorConn(conn)
	}
	return out, err
}
