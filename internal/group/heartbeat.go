package group

import (
	"context"
	"fmt"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/rackfetch/kafka-go/protocol"
)

// heartbeatLoop sends a heartbeat every HeartbeatInterval. The coordinator
// saying the generation is over (a rebalance, an unknown member or
// generation) ends it at once. A heartbeat that gets no answer, or the
// coordinator moving or loading, does not: the member still owns its
// partitions until the broker would have evicted it, SessionTimeout after
// the last answered heartbeat, so the heartbeat is retried (soon, against
// the coordinator looked up again) and the generation only ends when the
// session ran out. Fetching goes on meanwhile.
func (gen *Generation) heartbeatLoop(interval time.Duration) {
	g := gen.group
	gen.Start(func(ctx context.Context) {
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
			err := gen.heartbeatOnce()
			if err == nil {
				if failures > 0 {
					g.deps.Log.Printf("heartbeats of group %s generation %d answered again after %d failures in %v", gen.GroupID, gen.ID, failures, time.Since(failingSince).Round(time.Millisecond))
				}
				failures, wait = 0, interval
				continue
			}
			if ctx.Err() != nil {
				return
			}
			if !g.coordinatorUnreachable(err) {
				if g.deps.Errors.Is(err, codeRebalanceInProgress) {
					g.deps.Log.Printf("group %s is rebalancing: generation %d of member %s ends", gen.GroupID, gen.ID, gen.MemberID)
				} else {
					g.deps.Log.Errorf("heartbeat of group %s generation %d failed: %v", gen.GroupID, gen.ID, err)
				}
				gen.end(err)
				return
			}
			if failures == 0 {
				failingSince = time.Now()
			}
			failures++
			deadline := gen.sessionDeadline()
			if !time.Now().Before(deadline) {
				err = fmt.Errorf("no heartbeat of member %s answered for the session timeout (%v): %w", gen.MemberID, g.cfg.SessionTimeout, err)
				g.deps.Log.Errorf("heartbeat of group %s generation %d failed: %v", gen.GroupID, gen.ID, err)
				gen.end(err)
				return
			}
			g.deps.Log.Printf("heartbeat of group %s generation %d failed (attempt %d, retrying; the member keeps its partitions for %v more): %v",
				gen.GroupID, gen.ID, failures, time.Until(deadline).Round(time.Millisecond), err)
			wait = min(retry.Backoff(failures, 100*time.Millisecond, interval), time.Until(deadline))
		}
	})
}

// heartbeatOnce sends one heartbeat through the coordinator (looked up
// again when needed), under a deadline that ends no later than the
// member's session.
func (gen *Generation) heartbeatOnce() error {
	g := gen.group
	deadline := time.Now().Add(2 * g.cfg.Timeout) // lookup, then the heartbeat
	if sd := gen.sessionDeadline(); sd.Before(deadline) {
		deadline = sd
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	sent := time.Now()
	conn, err := g.coordinator(ctx)
	if err != nil {
		return err
	}
	err = gen.heartbeat(ctx, conn)
	g.coordinatorAnswered(conn, err)
	if err == nil {
		gen.heartbeatAnswered(sent)
		return nil
	}
	if g.coordinatorMoved(err) {
		g.dropCoordinatorConn(conn)
	}
	return err
}

// heartbeat sends one heartbeat of gen on conn. It is not cancelled with
// the generation: an interrupted request would break the connection that
// the generation's last commits still need.
func (gen *Generation) heartbeat(ctx context.Context, conn Conn) error {
	resp, _, err := conn.RoundTrip(ctx, &protocol.HeartbeatRequest{
		GroupID:      gen.GroupID,
		GenerationID: gen.ID,
		MemberID:     gen.MemberID,
	}, -1)
	if err != nil {
		return err
	}
	return gen.group.deps.Errors.FromCode(resp.(*protocol.HeartbeatResponse).ErrorCode, "")
}
