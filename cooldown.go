package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/internal/routing"
)

// The replica cooldown cache: replicas that failed are not read for a while
// (2 s, doubling on repeated failure up to ReplicaCooldown, ended early when
// metadata shows the replica back in the ISR; with a rack, a broker's lasts
// until a probe reaches it). It lives in internal/routing
// (cooldown.go there); one cache is shared by every partition of the
// Readers sharing an engine (internal/consumer holds it), so a broker that
// fails for one partition is avoided for all of them and probed once.
type cooldownCache = routing.Cooldowns

func newCooldownCache() *cooldownCache { return routing.NewCooldowns() }

// cooldownsSawMetadata tells the share's cooldowns which brokers the
// latest metadata lists: they forget the others (routing.Cooldowns.Listed).
func (s *engineShare) cooldownsSawMetadata() {
	s.rt.Cooldowns().Listed(s.cluster.listedBrokers())
}

// probeDial is the probe of a broker whose cooldown ran out: it connects
// and negotiates API versions (the broker is back), then checks that the
// path carries what the share reads (checkPath): reachable is not enough
// for a follower behind a lossy or throttled path, which reads would leave
// again as soon as they came back.
func (s *engineShare) probeDial(ctx context.Context, id int) error {
	b, ok := s.brokerAddr(id)
	if !ok {
		return fmt.Errorf("no address known for broker %d", id)
	}
	c, err := s.cluster.dialer.dialBroker(ctx, "tcp", b, Partition{})
	if err != nil {
		if connectedThenTimedOut(err) {
			// Something accepted the connection and then carried nothing
			// in time (a black-holed or lossy path, a frozen process): not
			// a broker that is gone, whose probes grow apart.
			return fmt.Errorf("%w: %v", consumer.ErrSlowPath, err)
		}
		return err
	}
	defer c.Close()
	return s.checkPath(ctx, c, id)
}

// connectedThenTimedOut reports whether a dial's err is a timeout after the
// TCP connection was made (in TLS, SASL or ApiVersions), not a failure to
// connect (refused, no route, a connect that timed out).
func connectedThenTimedOut(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var timeout interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &timeout) && timeout.Timeout())
}
