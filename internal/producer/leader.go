package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/metadata"
	"github.com/rackfetch/kafka-go/protocol"
)

// What the Writer does about leaders that cannot be trusted to have
// stored a write: a leader not yet hosting a partition it is named for
// (acks=0 would be dropped silently), and a leader that stopped answering
// while the cluster elected another (a frozen broker keeps its TCP
// connections open, so nothing fails until the request's deadline).

// leaderMark is a partition's leader as the metadata named it when a
// request was sent: the broker and its leader epoch.
type leaderMark struct {
	id    int
	epoch int
	set   bool
}

// leaderWatch reads the metadata from other brokers than a leader that
// stopped answering, on connections of its own. It knows nothing of the
// Writer's messages.
type leaderWatch struct {
	tc      Cluster
	set     logSettings
	code    func(int16) error // the kafka.Error of a code
	workers *sync.WaitGroup   // the Core's

	pollMu    sync.Mutex
	pollConns map[int]Conn         // by broker id
	polled    map[string]time.Time // by topic: when a poll of it last succeeded
}

// watched is a partition a request carries, and its leader then.
type watched struct {
	key  TopicPartition
	mark leaderMark
}

// leaderMark returns the cached leader of key.
func (lw *leaderWatch) leaderMark(key TopicPartition) leaderMark {
	id, epoch, ok := lw.tc.LeaderEpoch(key.Topic, key.Partition)
	if !ok || id < 0 {
		return leaderMark{}
	}
	return leaderMark{id: id, epoch: epoch, set: true}
}

// The leader watch of a produce request: once it has gone unanswered for
// StallAfter, the metadata is read every PollInterval from another broker
// (each read bounded by PollTimeout), and the request is abandoned as soon
// as a partition it carries has a new leader. A healthy broker answers in
// milliseconds even with acks=all; a broker that is leader no more would
// only answer NotLeaderForPartition, if it answers at all.
var (
	StallAfter   = time.Second
	PollInterval = 100 * time.Millisecond
	PollTimeout  = time.Second
)

// leaderMovedError abandons a request to a broker that no longer leads a
// partition the request carries. It unwraps to NotLeaderForPartition, so
// the batches are retried, at the new leader.
type leaderMovedError struct {
	key       TopicPartition
	from, to  leaderMark
	after     time.Duration
	notLeader error // kafka.NotLeaderForPartition
}

func (e *leaderMovedError) Error() string {
	return fmt.Sprintf("no answer from broker %d after %s, and the metadata now names broker %d (leader epoch %d) as leader of %s/%d: %v",
		e.from.id, e.after.Round(time.Millisecond), e.to.id, e.to.epoch, e.key.Topic, e.key.Partition, e.notLeader)
}

func (e *leaderMovedError) Unwrap() error { return e.notLeader }

// watchLeaders starts the leader watch of a request to broker carrying
// items; abandon cancels the request. The returned function stops the
// watch.
func (c *Core[M]) watchLeaders(ctx context.Context, abandon context.CancelCauseFunc, broker Broker, items []sendItem[M]) (stop func()) {
	var parts []watched
	var topics []string
	for i := range items {
		if it := &items[i]; it.end != 0 && it.mark.set {
			parts = append(parts, watched{it.b.key, it.mark})
			if len(topics) == 0 || topics[len(topics)-1] != it.b.key.Topic {
				topics = append(topics, it.b.key.Topic)
			}
		}
	}
	if len(parts) == 0 {
		return func() {}
	}
	return c.watch.start(ctx, abandon, broker, parts, topics)
}

// start watches the leaders of parts, carried by a request to broker.
func (lw *leaderWatch) start(ctx context.Context, abandon context.CancelCauseFunc, broker Broker, parts []watched, topics []string) (stop func()) {
	// No goroutine until the request is overdue: most are answered in
	// milliseconds.
	done := make(chan struct{})
	start := time.Now()
	lw.workers.Add(1)
	first := time.AfterFunc(StallAfter, func() {
		defer lw.workers.Done()
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// Ask the brokers that may take over: a new leader knows
			// of its election first.
			var targets []Broker
			for _, p := range parts {
				targets = lw.pollTargets(targets, p.key, broker.ID)
			}
			// The watches of requests in flight together share a
			// poll: at most one per PollInterval for a topic.
			pctx, cancel := context.WithTimeout(ctx, PollTimeout)
			err := lw.pollLeaders(pctx, topics, targets, time.Now().Add(-PollInterval))
			cancel()
			if err != nil && ctx.Err() == nil {
				withLogger(lw.set, func(l Logger) {
					l.Printf("broker %d has not answered a produce request for %s; reading metadata to look for a new leader: %s",
						broker.ID, time.Since(start).Round(time.Millisecond), err)
				})
			}
			for _, p := range parts {
				// Only another broker is a reason to give up: the same
				// broker with a newer epoch still answers for it.
				if m := lw.leaderMark(p.key); m.set && m.id != p.mark.id && m.epoch >= p.mark.epoch {
					abandon(&leaderMovedError{key: p.key, from: p.mark, to: m, after: time.Since(start), notLeader: lw.code(codeNotLeaderForPartition)})
					return
				}
			}
			t.Reset(PollInterval)
		}
	})
	return func() {
		if first.Stop() {
			lw.workers.Done() // the watch never started
		}
		close(done)
	}
}

// maxPollTargets bounds the brokers one poll asks.
const maxPollTargets = 3

// pollTargets appends to targets the replicas of key other than avoid
// (the broker not answering), or any other broker when the partition has
// no other replica known, up to maxPollTargets.
func (lw *leaderWatch) pollTargets(targets []Broker, key TopicPartition, avoid int) []Broker {
	has := func(id int) bool {
		for _, b := range targets {
			if b.ID == id {
				return true
			}
		}
		return id == avoid
	}
	for _, id := range lw.tc.Replicas(nil, key.Topic, key.Partition) {
		if len(targets) >= maxPollTargets || has(id) {
			continue
		}
		if b, ok := lw.tc.Broker(id); ok {
			targets = append(targets, b)
		}
	}
	if len(targets) == 0 {
		for _, b := range lw.tc.Brokers(nil) {
			if !has(b.ID) {
				return append(targets, b)
			}
		}
	}
	return targets
}

// pollLeaders reads the metadata of topics from each of targets, one
// after the other, and merges the answers into the cluster cache. The
// shared control connection is not used: it may be to the broker that
// stopped answering. A connection per broker is kept for the next polls.
// A poll that ended after since (by a concurrent caller) is enough.
func (lw *leaderWatch) pollLeaders(ctx context.Context, topics []string, targets []Broker, since time.Time) error {
	lw.pollMu.Lock()
	defer lw.pollMu.Unlock()
	if !since.IsZero() && lw.polledAfter(topics, since) {
		return nil
	}
	if len(targets) == 0 {
		return errors.New("no broker to ask")
	}
	req := metadata.Request(topics, false)
	var lastErr error
	ok := false
	for _, b := range targets {
		resp, err := lw.pollAt(ctx, b, req)
		if err == nil {
			md, isMD := resp.(*protocol.MetadataResponse)
			if !isMD {
				err = fmt.Errorf("the answer is %T", resp)
			} else {
				lw.tc.MergeMetadata(md)
				ok = true
				continue
			}
		}
		lastErr = fmt.Errorf("reading metadata of %v from broker %d: %w", topics, b.ID, err)
		if ctx.Err() != nil {
			break
		}
	}
	if !ok {
		return lastErr
	}
	if lw.polled == nil {
		lw.polled = map[string]time.Time{}
	}
	now := time.Now()
	for _, t := range topics {
		lw.polled[t] = now
	}
	return nil
}

// polledAfter reports whether every topic of topics was read by a poll
// that ended after since; lw.pollMu is held.
func (lw *leaderWatch) polledAfter(topics []string, since time.Time) bool {
	for _, t := range topics {
		if !lw.polled[t].After(since) {
			return false
		}
	}
	return true
}

// pollAt sends req to broker b, on the poll connection to b (dialed when
// there is none), or through the custom RoundTripper; lw.pollMu is held.
func (lw *leaderWatch) pollAt(ctx context.Context, b Broker, req protocol.Request) (protocol.Response, error) {
	if !lw.tc.Dials() {
		return lw.tc.RoundTrip(ctx, b, req)
	}
	conn := lw.pollConns[b.ID]
	if conn != nil && conn.Broken() {
		conn.Close()
		conn = nil
	}
	if conn == nil {
		var err error
		if conn, err = lw.tc.Dial(ctx, b); err != nil {
			delete(lw.pollConns, b.ID)
			return nil, err
		}
		if lw.pollConns == nil {
			lw.pollConns = map[int]Conn{}
		}
		lw.pollConns[b.ID] = conn
	}
	resp, err := conn.RoundTrip(ctx, req, -1)
	if err != nil {
		conn.Close()
		delete(lw.pollConns, b.ID)
		return nil, err
	}
	return resp, nil
}

// rediscover reads the metadata of topic after a failed write: on a poll
// connection to a broker that answered a leader watch, if there is one
// (the shared control connection may be to a broker that stopped
// answering), else, or when that fails, through the shared cache.
func (lw *leaderWatch) rediscover(topic string, since time.Time) {
	lw.pollMu.Lock()
	var targets []Broker
	for id := range lw.pollConns {
		if b, ok := lw.tc.Broker(id); ok && len(targets) < 1 {
			targets = append(targets, b)
		}
	}
	lw.pollMu.Unlock()
	if len(targets) > 0 {
		ctx, cancel := context.WithTimeout(lw.tc.Context(), PollTimeout)
		err := lw.pollLeaders(ctx, []string{topic}, targets, since)
		cancel()
		if err == nil {
			return
		}
	}
	ctx, cancel := context.WithTimeout(lw.tc.Context(), lw.set.ReadTimeout())
	defer cancel()
	if err := lw.tc.RefreshSince(ctx, topic, since); err != nil {
		withErrorLogger(lw.set, func(l Logger) { l.Printf("refreshing the metadata of %s: %s", topic, err) })
	}
}

// closePoll closes the connections of the leader watch.
func (lw *leaderWatch) closePoll() {
	lw.pollMu.Lock()
	defer lw.pollMu.Unlock()
	for id, conn := range lw.pollConns {
		conn.Close()
		delete(lw.pollConns, id)
	}
}

// ErrAcksNoneClosed fails an acks=0 produce whose connection the broker
// closed: Kafka closes it instead of answering when it refuses such a
// produce (not the leader, unknown partition, too large...).
var ErrAcksNoneClosed = errors.New("the broker closed the connection after a produce with acks=0, which it does when it refuses one: the messages may not have been stored")

// confirmAcksNone makes sure the broker processed the acks=0 produce just
// written on conn without refusing it: Kafka handles the requests of a
// connection one at a time, in order, and closes the connection on a
// refused acks=0 produce, so an answer to a request sent after it (a
// version 0 ApiVersions, the smallest there is) means the produce was
// appended to the leader's log, as acks=1 would have said.
func confirmAcksNone(ctx context.Context, conn Conn) error {
	if _, err := conn.RoundTrip(ctx, &protocol.ApiVersionsRequest{}, 0); err != nil {
		return fmt.Errorf("%w (%v)", ErrAcksNoneClosed, err)
	}
	return nil
}
