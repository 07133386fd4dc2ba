package group

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/rackfetch/kafka-go/protocol"
)

// Coordinator is the broker FindCoordinator names.
type Coordinator struct {
	ID   int
	Host string
	Port int
}

// FindCoordinator asks the broker behind c which one coordinates group id
// (key type 0, a group). errs turns an error code into the client's error.
func FindCoordinator(ctx context.Context, c Conn, id string, errs Errors) (Coordinator, error) {
	req := &protocol.FindCoordinatorRequest{
		CoordinatorKey:  id, // v1-3
		KeyType:         protocol.CoordinatorKeyTypeGroup,
		CoordinatorKeys: []string{id}, // v4+
	}
	resp, v, err := c.RoundTrip(ctx, req, -1)
	if err != nil {
		return Coordinator{}, err
	}
	r := resp.(*protocol.FindCoordinatorResponse)
	b := Coordinator{ID: int(r.NodeID), Host: r.Host, Port: int(r.Port)}
	code, msg := r.ErrorCode, r.ErrorMessage
	if v >= 4 {
		if len(r.Coordinators) == 0 {
			return b, errors.New("FindCoordinator answered without a coordinator")
		}
		co := r.Coordinators[0]
		b = Coordinator{ID: int(co.NodeID), Host: co.Host, Port: int(co.Port)}
		code, msg = co.ErrorCode, co.ErrorMessage
	}
	if code != 0 {
		m := ""
		if msg != nil {
			m = *msg
		}
		return b, errs.FromCode(code, m)
	}
	return b, nil
}

// coordinator returns the connection to the group's coordinator, looking
// the coordinator up and dialing it when there is none (or it broke: a
// request that timed out closes its connection). Lookups are retried (the
// coordinator of a new group may take a moment to load, a failed one a
// moment to move) for up to Timeout. The heartbeat loop, commits and the
// join all come through here, one at a time.
func (g *Group) coordinator(ctx context.Context) (CoordinatorConn, error) {
	select {
	case g.coordMu <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("finding the coordinator of group %s: %w", g.cfg.ID, ctx.Err())
	}
	defer func() { <-g.coordMu }()
	if c := g.coord; c != nil && !c.Broken() {
		return c, nil
	}
	g.closeCoordinatorLocked()
	deadline := time.Now().Add(g.cfg.Timeout)
	for attempt := 1; ; attempt++ {
		c, err := g.deps.Cluster.DialCoordinator(ctx)
		if err == nil {
			g.coord = c
			return c, nil
		}
		if ctx.Err() != nil || g.deps.Errors.Is(err, codeGroupAuthorizationFailed) || g.deps.Errors.Permanent(err) || time.Now().After(deadline) {
			return nil, fmt.Errorf("finding the coordinator of group %s: %w", g.cfg.ID, err)
		}
		g.deps.Failures.Set(fmt.Errorf("finding the coordinator of group %s: %w", g.cfg.ID, err))
		g.deps.Log.Printf("finding the coordinator of group %s (attempt %d, retrying): %v", g.cfg.ID, attempt, err)
		if !retry.Sleep(ctx, retry.Backoff(attempt, 50*time.Millisecond, time.Second)) {
			return nil, fmt.Errorf("finding the coordinator of group %s: %w", g.cfg.ID, ctx.Err())
		}
	}
}

// dropCoordinator closes the coordinator connection so that the next use
// looks the coordinator up again.
func (g *Group) dropCoordinator() {
	g.coordMu <- struct{}{}
	g.closeCoordinatorLocked()
	<-g.coordMu
}

// dropCoordinatorConn drops c if it is still the coordinator connection
// (another goroutine may already have replaced it).
func (g *Group) dropCoordinatorConn(c CoordinatorConn) {
	if c == nil {
		return
	}
	g.coordMu <- struct{}{}
	if g.coord == c {
		g.closeCoordinatorLocked()
	}
	<-g.coordMu
}

// coordinatorAnswered notes the outcome of a request on c (nil when the
// lookup failed).
func (g *Group) coordinatorAnswered(c CoordinatorConn, err error) {
	if c != nil {
		g.deps.Cluster.CoordinatorAnswered(c, err)
	}
}

func (g *Group) closeCoordinatorLocked() {
	if g.coord != nil {
		g.coord.Close()
		g.coord = nil
	}
}

// coordinatorMoved reports the errors of a coordinator that no longer
// coordinates the group (or never did): look it up again.
func (g *Group) coordinatorMoved(err error) bool {
	return g.deps.Errors.Is(err, codeNotCoordinator) || g.deps.Errors.Is(err, codeCoordinatorNotAvailable)
}

// coordinatorUnreachable reports errors of a request to the coordinator
// that say nothing about the member or its generation: the coordinator
// moved, is loading the group, or did not answer (a timeout, a refused
// dial, a closed connection). They are retried, against a coordinator
// looked up again, while the member's session lasts.
func (g *Group) coordinatorUnreachable(err error) bool {
	e := g.deps.Errors
	if g.coordinatorMoved(err) || e.Is(err, codeCoordinatorLoadInProgress) || e.Is(err, codeRequestTimedOut) {
		return true
	}
	return !e.Kafka(err) && !errors.Is(err, ErrGenerationEnded) && !errors.Is(err, ErrClosed)
}

// generationOverError reports the errors with which the coordinator says
// that the generation is over for this member.
func (g *Group) generationOverError(err error) bool {
	e := g.deps.Errors
	return e.Is(err, codeRebalanceInProgress) || e.Is(err, codeIllegalGeneration) ||
		e.Is(err, codeUnknownMemberID) || e.Is(err, codeFencedInstanceID)
}

// leaveGroup tells the coordinator that the member leaves, so that the
// group rebalances at once instead of after the session timeout.
func (g *Group) leaveGroup(ctx context.Context) error {
	conn, err := g.coordinator(ctx)
	if err != nil {
		return err
	}
	reason := "the consumer group was closed"
	resp, _, err := conn.RoundTrip(ctx, &protocol.LeaveGroupRequest{
		GroupID:  g.cfg.ID,
		MemberID: g.memberID,                                                                  // v0-2
		Members:  []protocol.LeaveGroupRequestMember{{MemberID: g.memberID, Reason: &reason}}, // v3+
	}, -1)
	if err != nil {
		return err
	}
	r := resp.(*protocol.LeaveGroupResponse)
	if err := g.deps.Errors.FromCode(r.ErrorCode, ""); err != nil {
		return err
	}
	for _, m := range r.Members {
		if err := g.deps.Errors.FromCode(m.ErrorCode, ""); err != nil {
			return err
		}
	}
	return nil
}
