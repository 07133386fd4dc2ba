package fetchengine

import (
	"math"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// Kafka serves one request at a time per connection, so a partition that
// asks while its broker's loop has a long poll in flight (a new Reader, a
// group assignment, a move between replicas, one back from a backoff)
// would wait for the poll to end: up to MaxWait, 10 s by default. Capping
// every poll instead made an idle consumer send two fetches a second per
// broker. The loop's side lane serves those partitions: while the main
// lane's idle long poll (every partition at its broker's end) has more
// than sideMinLeft to go, pending partitions are fetched on a second
// connection of the loop, sessionless, and polled no longer than SidePoll
// nor past the main poll's end, after which they go with the others again.
// The side connection closes once unused for SideIdle. An idle loop thus
// sends one fetch per MaxWait; only arrivals pay for a second connection.

// SidePoll bounds a side lane poll: a partition arriving while one is in
// flight waits at most that long.
const SidePoll = 500 * time.Millisecond

// SideIdle closes a side connection unused for that long.
const SideIdle = 30 * time.Second

// sideMinLeft: a main poll ending sooner than that is waited for: a side
// poll would gain little on it, and a busy loop polling short (followers
// while records flow) keeps to its one connection.
const sideMinLeft = SidePoll

// arrivalsGoSide reports whether pending partitions go on the side lane;
// e.mu held.
func (l *loop) arrivalsGoSide() bool {
	return !l.idleUntil.IsZero() && l.idleUntil.Sub(l.e.now()) > sideMinLeft
}

// sideWait returns the long poll of ln's request for batch, wait as the
// partitions ask; for the main lane it records whether the poll is idle.
// e.mu held.
func (ln *lane) sideWait(batch []*waiter, wait time.Duration) time.Duration {
	l := ln.l
	now := l.e.now()
	if ln.side {
		if l.idleUntil.IsZero() {
			// The main poll ended meanwhile: the others ask soon.
			return min(wait, HeldPoll)
		}
		return max(min(wait, SidePoll, l.idleUntil.Sub(now)-HeldPoll), 0)
	}
	l.idleUntil = time.Time{}
	if wait <= HeldPoll {
		return wait
	}
	for _, w := range batch {
		end, ok := l.ends[key{w.want.Topic, w.want.Partition}]
		if !ok || w.want.Offset < end {
			return wait // the broker has records: it answers at once
		}
	}
	l.idleUntil = now.Add(wait)
	l.signal() // partitions already waiting go on the side lane
	return wait
}

// idleTimeout is how long ln keeps an unused connection.
func (ln *lane) idleTimeout() time.Duration {
	if ln.side {
		return min(ln.l.e.cfg.IdleTimeout, SideIdle)
	}
	return ln.l.e.cfg.IdleTimeout
}

// OldBrokerPoll bounds the long poll of fetches that old brokers hold for
// the whole wait however soon they could answer: at a follower before
// Kafka 3.4 (KAFKA-14334: replicating new records does not end a
// consumer's poll), and carrying the client's rack at a leader before 3.3
// (a leader that names a preferred replica waits before saying so). 500 ms
// is the Java consumer's fetch.max.wait.ms.
const OldBrokerPoll = 500 * time.Millisecond

const (
	// Fetch v15 arrived in 3.5, the first version told apart from 3.3
	// (3.4 has the follower fix too, but the same versions as 3.3).
	followerWakesFetch = 15
	// DescribeAcls v3 arrived in 3.3.
	leaderNamesAtOnceAcls = 3
)

// oldBrokerWait returns the longest poll for w at a broker speaking vs.
func oldBrokerWait(vs protocol.Versions, w Want) time.Duration {
	if w.Follower {
		if v, ok := vs[protocol.Fetch]; ok && v.Max < followerWakesFetch {
			return OldBrokerPoll
		}
	} else if w.Rack != "" {
		if v, ok := vs[protocol.DescribeAcls]; ok && v.Max < leaderNamesAtOnceAcls {
			return OldBrokerPoll
		}
	}
	return time.Duration(math.MaxInt64)
}
