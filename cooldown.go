package kafka

import "github.com/rackfetch/kafka-go/internal/routing"

// The replica cooldown cache: replicas that failed are not read for a while
// (2 s, doubling on repeated failure up to ReplicaCooldown, ended early when
// metadata shows the replica back in the ISR; with a rack, a broker's lasts
// until a probe reaches it). It lives in internal/routing
// (cooldown.go there); one cache is shared by every partition of a Reader,
// so a broker that fails for one partition is avoided for all of them.
type cooldownCache = routing.Cooldowns

func newCooldownCache() *cooldownCache { return routing.NewCooldowns() }

// cooldownsSawMetadata tells the Reader's cooldowns which brokers the
// latest metadata lists: they forget the others (routing.Cooldowns.Listed).
func (r *Reader) cooldownsSawMetadata() {
	r.cooldown.Listed(r.cluster.listedBrokers())
}
