package routing

import (
	"sort"
	"time"
)

// Client-side replica selection: for brokers without
// replica.selector.class, whose leaders never name a preferred replica. A
// broker serves a v11+ consumer fetch from any replica it hosts whatever its
// selector, so the Reader may pick the replica itself. The broker's choice,
// when its leader names one, always wins; the client's applies only when the
// leader names none. The choice enters the routing state machine
// (selector.go) as a lease like the leader's, under the same rules:
// in-sync replicas only, cooldowns, the flap budget, the TTL after which the
// leader is asked again, leader changes and epochs; offsets are still
// resolved at the leader only.

// Chooser is the client's replica choice (kafka.ReplicaSelector, adapted by
// the kafka package): the broker a client in clientRack should read p from,
// p's Isr reduced to the replicas it may read now; false for the leader.
type Chooser interface {
	Choose(clientRack string, p Partition) (brokerID int, ok bool)
}

// RackAffinity is kafka.RackAffinityReplicaSelector's choice: an in-sync
// replica in the client's rack, the leader when it is there, else one of
// the rack's in-sync replicas, the same one for a partition every time (by
// partition ID, so that the partitions of a topic spread over a rack's
// brokers); false when the client has no rack or no in-sync replica is in
// it.
type RackAffinity struct{}

// Choose satisfies Chooser.
func (RackAffinity) Choose(clientRack string, p Partition) (int, bool) {
	if clientRack == "" {
		return 0, false
	}
	var ids []int
	for _, b := range p.Isr {
		if replicaRack(p, b) != clientRack {
			continue
		}
		if b.ID == p.Leader.ID {
			return b.ID, true
		}
		ids = append(ids, b.ID)
	}
	if len(ids) == 0 {
		return 0, false
	}
	sort.Ints(ids)
	return ids[p.ID%len(ids)], true
}

// replicaRack returns b's rack, from wherever p carries it: metadata may
// list a broker with its rack in one list and by ID only in another.
func replicaRack(p Partition, b Replica) string {
	if b.Rack != "" {
		return b.Rack
	}
	for _, r := range append([]Replica{p.Leader}, p.Replicas...) {
		if r.ID == b.ID && r.Rack != "" {
			return r.Rack
		}
	}
	return ""
}

// Readable returns p with Isr reduced to the replicas that are readable
// per p (InSync) and ok; p itself when none is left out.
func Readable(p Partition, ok func(id int) bool) Partition {
	all := true
	for _, b := range p.Isr {
		if !InSync(&p, b.ID) || !ok(b.ID) {
			all = false
			break
		}
	}
	if all {
		return p
	}
	isr := make([]Replica, 0, len(p.Isr))
	for _, b := range p.Isr {
		if InSync(&p, b.ID) && ok(b.ID) {
			isr = append(isr, b)
		}
	}
	p.Isr = isr
	return p
}

// ReasonClientChoice labels a move to the replica the client's
// ReplicaSelector picked.
const ReasonClientChoice Reason = "client_selected"

// clientChoice returns the follower the client's selector picks for the
// partition now, or -1 for the leader (no selector, no pick, the leader
// picked, a pick that is not usable, or the leader naming a replica that
// is refused: the broker's choice wins, even refused).
func (s *Selector) clientChoice(now time.Time) int {
	if s.cfg.Choice == nil || s.leader < 0 || (s.held >= 0 && now.Before(s.heldUntil)) {
		return -1
	}
	p := Readable(s.part, func(id int) bool { return !s.cooldown.cooling(id, s.tp(), now) })
	id, ok := s.cfg.Choice.Choose(s.cfg.Rack, p)
	if !ok || id == s.leader || !s.usable(id, now) {
		s.cooldown.wait(s.tp(), s.awaitsReplica(now), now)
		return -1
	}
	if s.lagUnvouched(id) {
		s.cooldown.wait(s.tp(), true, now) // metadata every second until it says
		return -1
	}
	s.cooldown.wait(s.tp(), false, now)
	return id
}

// choiceState is what client-side selection remembers of a partition.
type choiceState struct {
	// racks of the replicas, as metadata last told them: a broker that is
	// down is listed by ID only, and its rack is still where it will be.
	racks map[int]string
}

// remember notes the racks of p's replicas that p tells.
func (c *choiceState) remember(p Partition) {
	for _, b := range p.Replicas {
		if r := replicaRack(p, b); r != "" {
			if c.racks == nil {
				c.racks = map[int]string{}
			}
			c.racks[b.ID] = r
		}
	}
}

// awaitsReplica reports whether the selector would pick a follower if every
// replica were in sync and healthy: one that failed, left the ISR, is
// offline or down. No leader names it when it is back, so the Reader
// re-reads metadata meanwhile (Cooldowns.active) to see it rejoin.
func (s *Selector) awaitsReplica(now time.Time) bool {
	s.choice.remember(s.part)
	all := s.part
	all.Replicas = make([]Replica, len(s.part.Replicas))
	for i, b := range s.part.Replicas {
		b.Rack = s.choice.racks[b.ID]
		all.Replicas[i] = b
	}
	all.Isr = all.Replicas
	id, ok := s.cfg.Choice.Choose(s.cfg.Rack, all)
	return ok && id != s.leader && !s.usable(id, now)
}

// choiceWaitTTL bounds how long a partition counts as waiting for its
// replica after the router last found it so: a partition no longer read
// stops the refreshes.
const choiceWaitTTL = 30 * time.Second

// wait records whether partition tp waits for its client-selected replica
// at now.
func (c *Cooldowns) wait(tp topicPartition, waiting bool, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !waiting {
		delete(c.waits, tp)
		return
	}
	if c.waits == nil {
		c.waits = map[topicPartition]time.Time{}
	}
	c.waits[tp] = now.Add(choiceWaitTTL)
}

// waitingLocked reports whether a partition waits for its replica at now,
// forgetting the waits that lapsed; c.mu is held.
func (c *Cooldowns) waitingLocked(now time.Time) bool {
	for tp, until := range c.waits {
		if now.Before(until) {
			return true
		}
		delete(c.waits, tp)
	}
	return false
}

// clientLease moves reads to the client's choice when the leader names no
// replica (its answer was -1, or metadata arrived while reading from it).
// Going back to the follower of the last lease is a renewal, off the flap
// budget, as for the leader's naming. It reports whether reads are on the
// client's choice.
func (s *Selector) clientLease(d *Decision, now time.Time) bool {
	x := s.clientChoice(now)
	if x < 0 {
		return false
	}
	if x != s.cur && x != s.leased {
		ok, _ := s.budgetLeft(now)
		if !ok {
			if d.Reason == "" {
				d.Reason = ReasonFlapDamped
			}
			return false
		}
		s.switches = append(s.switches, now)
	}
	s.route(d, x, ReasonClientChoice, now)
	s.pinnedAt = now
	return true
}

// onMetadataChoice applies the client's choice to new metadata while reads
// are on the leader: at start, after a leader change, and once a replica
// that failed is back in the ISR (its cooldown ended), without waiting for
// the leader's next answer.
func (s *Selector) onMetadataChoice(p Partition, now time.Time, d *Decision) {
	if s.cfg.Choice != nil {
		s.choice.remember(p)
	}
	if p.Leader.ID < 0 || s.cur != s.leader {
		return
	}
	// After the TTL, metadata (a refresh after the leader failed, a new
	// leader) can come before the leader's answer: going back to the last
	// lease's follower is a renewal all the same.
	s.clientLease(d, now)
}
