package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/internal/routing"
	"github.com/rackfetch/kafka-go/protocol"
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

// The path check: the broker's own configuration with its documentation
// (DescribeConfigs v3+, about 90 KB from memory, cheap for the broker) must
// arrive at least pathMargin times as fast as the share's Readers read
// (readRate, over the last readRateWindow). An idle share needs only
// reachability, and so does a broker that refuses the request (no
// DESCRIBE_CONFIGS permission, an old broker): nothing can be measured
// then, and the probe says what it proved before.
const (
	pathMargin     = 2
	readRateWindow = 16 * time.Second
)

func (s *engineShare) checkPath(ctx context.Context, c *Conn, id int) error {
	need := s.reads.rate(time.Now()) * pathMargin
	if need <= 0 {
		return nil
	}
	req := &protocol.DescribeConfigsRequest{IncludeDocumentation: true,
		Resources: []protocol.DescribeConfigsRequestResource{{ResourceType: int8(ResourceTypeBroker), ResourceName: strconv.Itoa(id)}}}
	t0 := time.Now()
	r, v, err := c.roundTrip(ctx, req, -1)
	took := time.Since(t0)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%w: no answer to a %s request within %v", consumer.ErrSlowPath, req.Key(), took.Round(time.Millisecond))
		}
		return nil // refused or not understood: reachability is all a probe shows
	}
	resp := r.(*protocol.DescribeConfigsResponse)
	if v < 3 || len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 {
		return nil
	}
	n := describedBytes(resp)
	if got := float64(n) / max(took.Seconds(), 1e-6); got < need {
		return fmt.Errorf("%w: %d bytes took %v (%.0f KB/s), the Readers read %.0f KB/s and need %dx that",
			consumer.ErrSlowPath, n, took.Round(time.Millisecond), got/1e3, need/pathMargin/1e3, pathMargin)
	}
	return nil
}

// describedBytes is about the size of what resp carried: its names, values
// and documentation.
func describedBytes(resp *protocol.DescribeConfigsResponse) int {
	size := func(s *string) int {
		if s == nil {
			return 0
		}
		return len(*s)
	}
	n := 0
	for _, r := range resp.Results {
		for _, c := range r.Configs {
			n += len(c.Name) + size(c.Value) + size(c.Documentation)
			for _, syn := range c.Synonyms {
				n += len(syn.Name) + size(syn.Value)
			}
		}
	}
	return n
}

// readMeter counts the bytes the share's Readers fetch, in buckets of a
// second over readRateWindow, for the path check's rate.
type readMeter struct {
	mu      sync.Mutex
	buckets [16]struct {
		sec   int64
		bytes int64
	}
}

func (m *readMeter) add(now time.Time, n int64) {
	sec := now.Unix()
	m.mu.Lock()
	b := &m.buckets[sec%int64(len(m.buckets))]
	if b.sec != sec {
		b.sec, b.bytes = sec, 0
	}
	b.bytes += n
	m.mu.Unlock()
}

// rate is the bytes per second fetched over the window before now.
func (m *readMeter) rate(now time.Time) float64 {
	sec := now.Unix()
	var n int64
	m.mu.Lock()
	for _, b := range m.buckets {
		if sec-b.sec < int64(len(m.buckets)) {
			n += b.bytes
		}
	}
	m.mu.Unlock()
	return float64(n) / readRateWindow.Seconds()
}
