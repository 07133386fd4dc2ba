package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

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

// leaderMark returns the cached leader of key.
func (c *writerCore) leaderMark(key topicPartition) leaderMark {
	p, ok := c.tc.cl.partition(key.topic, key.partition)
	if !ok || p.Leader.ID < 0 {
		return leaderMark{}
	}
	return leaderMark{id: p.Leader.ID, epoch: p.LeaderEpoch, set: true}
}

// The leader watch of a produce request: once it has gone unanswered for
// stallAfter, the metadata is read every pollInterval from another broker
// (each read bounded by pollTimeout), and the request is abandoned as soon
// as a partition it carries has a new leader. A healthy broker answers in
// milliseconds even with acks=all; a broker that is leader no more would
// only answer NotLeaderForPartition, if it answers at all.
var (
	stallAfter   = time.Second
	pollInterval = 100 * time.Millisecond
	pollTimeout  = time.Second
)

// leaderMovedError abandons a request to a broker that no longer leads a
// partition the request carries. It unwraps to NotLeaderForPartition, so
// the batches are retried, at the new leader.
type leaderMovedError struct {
	key      topicPartition
	from, to leaderMark
	after    time.Duration
}

func (e *leaderMovedError) Error() string {
	return fmt.Sprintf("no answer from broker %d after %s, and the metadata now names broker %d (leader epoch %d) as leader of %s/%d: %v",
		e.from.id, e.after.Round(time.Millisecond), e.to.id, e.to.epoch, e.key.topic, e.key.partition, NotLeaderForPartition)
}

func (e *leaderMovedError) Unwrap() error { return NotLeaderForPartition }

// watchLeaders starts the leader watch of a request to broker carrying
// items; abandon cancels the request. The returned function stops the
// watch.
func (c *writerCore) watchLeaders(ctx context.Context, abandon context.CancelCauseFunc, broker Broker, items []sendItem) (stop func()) {
	type sent struct {
		key  topicPartition
		mark leaderMark
	}
	var parts []sent
	var topics []string
	for i := range items {
		if it := &items[i]; it.end != 0 && it.mark.set {
			parts = append(parts, sent{it.b.key, it.mark})
			if len(topics) == 0 || topics[len(topics)-1] != it.b.key.topic {
				topics = append(topics, it.b.key.topic)
			}
		}
	}
	done := make(chan struct{})
	if len(parts) == 0 {
		return func() {}
	}
	start := time.Now()
	c.workers.Add(1)
	go func() {
		defer c.workers.Done()
		t := time.NewTimer(stallAfter)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			pctx, cancel := context.WithTimeout(ctx, pollTimeout)
			err := c.pollLeaders(pctx, topics, broker.ID, time.Time{})
			cancel()
			if err != nil && ctx.Err() == nil {
				c.w.withLogger(func(l Logger) {
					l.Printf("broker %d has not answered a produce request for %s; reading metadata to look for a new leader: %s",
						broker.ID, time.Since(start).Round(time.Millisecond), err)
				})
			}
			for _, p := range parts {
				// Only another broker is a reason to give up: the same
				// broker with a newer epoch still answers for it.
				if m := c.leaderMark(p.key); m.set && m.id != p.mark.id && m.epoch >= p.mark.epoch {
					abandon(&leaderMovedError{key: p.key, from: p.mark, to: m, after: time.Since(start)})
					return
				}
			}
			t.Reset(pollInterval)
		}
	}()
	return func() { close(done) }
}

// pollLeaders reads the metadata of topics from a broker other than avoid
// (the one not answering) and merges it into the cluster cache. The
// shared control connection is not used: it may be to the stalled broker.
// One poll runs at a time; the connection is kept for the next one. A
// poll that ended after since (by a concurrent caller) is enough.
func (c *writerCore) pollLeaders(ctx context.Context, topics []string, avoid int, since time.Time) error {
	c.pollMu.Lock()
	defer c.pollMu.Unlock()
	if !since.IsZero() && c.polled.After(since) {
		return nil
	}
	if c.pollConn != nil && (c.pollConn.isBroken() || c.pollBroker == avoid) {
		c.pollConn.Close()
		c.pollConn = nil
	}
	req := &protocol.MetadataRequest{}
	for _, t := range topics {
		req.Topics = append(req.Topics, protocol.MetadataRequestTopic{Name: t})
	}
	var resp protocol.Response
	var err error
	if c.pollConn != nil {
		resp, _, err = c.pollConn.roundTrip(ctx, req, -1)
		if err != nil {
			c.pollConn.Close()
			c.pollConn = nil
			c.pollBad = c.pollBroker
		}
	} else {
		b, ok := c.pollTarget(avoid)
		if !ok {
			return errors.New("no other broker known")
		}
		resp, err = c.pollAt(ctx, b, req)
		if err != nil {
			c.pollBad = b.ID // try another broker next time
		}
	}
	if err != nil {
		return fmt.Errorf("reading metadata of %v: %w", topics, err)
	}
	md, ok := resp.(*protocol.MetadataResponse)
	if !ok {
		return fmt.Errorf("reading metadata of %v: the answer is %T", topics, resp)
	}
	c.tc.cl.merge(md.Brokers, md.Topics)
	c.polled = time.Now()
	return nil
}

// rediscover reads the metadata of topic after a failed write, on the
// leader watch's connection (kept to a broker that answered: the shared
// control connection may be to a broker that stopped answering), or
// through the shared cache when that fails.
func (c *writerCore) rediscover(topic string, since time.Time) {
	ctx, cancel := context.WithTimeout(c.tc.context(), pollTimeout)
	err := c.pollLeaders(ctx, []string{topic}, -1, since)
	cancel()
	if err == nil {
		return
	}
	ctx, cancel = context.WithTimeout(c.tc.context(), c.w.readTimeout())
	defer cancel()
	if err := c.tc.refreshSince(ctx, topic, since, false); err != nil {
		c.w.withErrorLogger(func(l Logger) { l.Printf("refreshing the metadata of %s: %s", topic, err) })
	}
}

// pollTarget picks the broker to read metadata from: not avoid, not the
// one that failed the last poll unless nothing else is left.
func (c *writerCore) pollTarget(avoid int) (Broker, bool) {
	cl := c.tc.cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var fallback Broker
	found := false
	for id, b := range cl.brokers {
		if id == avoid {
			continue
		}
		if id != c.pollBad {
			return b, true
		}
		fallback, found = b, true
	}
	return fallback, found
}

// pollAt sends req to broker b: on a new connection kept for the next
// poll, or through the custom RoundTripper.
func (c *writerCore) pollAt(ctx context.Context, b Broker, req protocol.Request) (protocol.Response, error) {
	if rt := c.tc.rt; rt != nil {
		return rt.RoundTrip(ctx, TCP(net.JoinHostPort(b.Host, strconv.Itoa(b.Port))), req)
	}
	conn, err := c.tc.dialProduce(ctx, b)
	if err != nil {
		return nil, err
	}
	resp, _, err := conn.roundTrip(ctx, req, -1)
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.pollConn, c.pollBroker = conn, b.ID
	return resp, nil
}

// closePoll closes the connection of the leader watch.
func (c *writerCore) closePoll() {
	c.pollMu.Lock()
	defer c.pollMu.Unlock()
	if c.pollConn != nil {
		c.pollConn.Close()
		c.pollConn = nil
	}
}

// errAcksNoneClosed fails an acks=0 produce whose connection the broker
// closed: Kafka closes it instead of answering when it refuses such a
// produce (not the leader, unknown partition, too large...).
var errAcksNoneClosed = errors.New("the broker closed the connection after a produce with acks=0, which it does when it refuses one: the messages may not have been stored")

// confirmAcksNone makes sure the broker processed the acks=0 produce just
// written on conn without refusing it: Kafka handles the requests of a
// connection one at a time, in order, and closes the connection on a
// refused acks=0 produce, so an answer to a request sent after it (a
// version 0 ApiVersions, the smallest there is) means the produce was
// appended to the leader's log, as acks=1 would have said.
func confirmAcksNone(ctx context.Context, conn *Conn) error {
	if _, _, err := conn.roundTrip(ctx, &protocol.ApiVersionsRequest{}, 0); err != nil {
		return fmt.Errorf("%w (%v)", errAcksNoneClosed, err)
	}
	return nil
}
