package kafka

import (
	"context"
	"fmt"

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

// probeDial connects to broker id and negotiates its API versions: the
// proof that a broker whose cooldown ran out is back.
func (s *engineShare) probeDial(ctx context.Context, id int) error {
	b, ok := s.brokerAddr(id)
	if !ok {
		return fmt.Errorf("no address known for broker %d", id)
	}
	c, err := s.cluster.dialer.dialBroker(ctx, "tcp", b, Partition{})
	if err != nil {
		return err
	}
	return c.Close()
}
