package kafka

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/internal/fetchengine"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/sasl/plain"
	"github.com/rackfetch/kafka-go/sasl/scram"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Partition-mode Readers with the same settings share one fetch engine:
// one connection per broker and one request for their partitions; two
// Readers of the same partition each get every record; the engine stops
// with its last Reader.
func TestReadersShareOneEngine(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 4, 1) // partitions 0 and 3 on broker 1
	for _, p := range []int32{0, 3} {
		vals := make([]string, 50)
		for i := range vals {
			vals[i] = fmt.Sprintf("p%d-%d", p, i)
		}
		c.AppendRecords("t", p, vals...)
	}
	dialer := &Dialer{ClientID: "share-test", Timeout: 5 * time.Second}
	reader := func(p int, d *Dialer) *Reader {
		return NewReader(ReaderConfig{Brokers: c.Addrs()[:1], Topic: "t", Partition: p, Dialer: d,
			MaxWait: 100 * time.Millisecond, ReadLagInterval: -1})
	}
	r0, r3 := reader(0, dialer), reader(3, dialer)
	// A Dialer of its own with the same settings, as a program building a
	// config per Reader makes.
	again := reader(0, &Dialer{ClientID: "share-test", Timeout: 5 * time.Second})
	other := reader(3, &Dialer{ClientID: "share-test-2", Timeout: 5 * time.Second})
	defer other.Close()
	require.Same(t, r0.engine, r3.engine, "same settings: one engine")
	require.Same(t, r0.engine, again.engine, "an equal Dialer: the same engine")
	assert.NotSame(t, r0.engine, other.engine, "another client ID: another engine")
	assert.NotEqual(t, r0.owner, again.owner, "each Reader its own owner number")

	ctx := rtCtx(t)
	for _, tc := range []struct {
		r *Reader
		p int
	}{{r0, 0}, {r3, 3}, {again, 0}, {other, 3}} {
		for i := 0; i < 50; i++ {
			m, err := tc.r.FetchMessage(ctx)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("p%d-%d", tc.p, i), string(m.Value))
			require.Equal(t, int64(i), m.Offset)
		}
	}
	assert.Equal(t, 1, r0.engine.Conns(), "one connection to broker 1 for the three Readers")
	// Both fetchers now long-poll at broker 1: their next fetches go in
	// one request.
	require.Eventually(t, func() bool {
		for _, rq := range c.Broker(1).Received(protocol.Fetch) {
			n := 0
			for _, tp := range rq.Request.(*protocol.FetchRequest).Topics {
				n += len(tp.Partitions)
			}
			if n == 2 {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "partitions 0 and 3 in one request")

	require.NoError(t, r0.Close())
	require.NoError(t, r3.Close())
	key := engineKeyOf(&again.config)
	engineShares.mu.Lock()
	_, running := engineShares.m[key]
	engineShares.mu.Unlock()
	assert.True(t, running, "a Reader still uses it")
	require.NoError(t, again.Close())
	engineShares.mu.Lock()
	_, running = engineShares.m[key]
	engineShares.mu.Unlock()
	assert.False(t, running, "stopped with its last Reader")
}

// A follower's long poll is short while records flow and MaxWait once they
// stop, whether the lag check's sampling or the follower's own answers say
// so; a leader is always polled for MaxWait.
func TestEngineMaxWaitFollowsRecordFlow(t *testing.T) {
	quiet := func() bool { return true }
	busy := func() bool { return false }
	lag := ReaderConfig{MaxWait: 10 * time.Second, MaxFollowerLag: 30 * time.Second, Rack: "b"}
	noLag := ReaderConfig{MaxWait: 10 * time.Second, MaxFollowerLag: -1, Rack: "b"}
	for _, c := range []struct {
		name  string
		cfg   ReaderConfig
		want  fetchengine.Want
		quiet func() bool
		wait  time.Duration
	}{
		{"leader", lag, fetchengine.Want{}, busy, 10 * time.Second},
		{"follower, leader's end moves", lag, fetchengine.Want{Follower: true}, busy, followerActivePoll},
		{"follower, leader's end stays", lag, fetchengine.Want{Follower: true, Drained: true}, quiet, 10 * time.Second},
		{"follower drained, leader's end moves", lag, fetchengine.Want{Follower: true, Drained: true}, busy, followerActivePoll},
		{"no lag check, follower sent records", noLag, fetchengine.Want{Follower: true}, busy, followerActivePoll},
		{"no lag check, follower drained", noLag, fetchengine.Want{Follower: true, Drained: true}, busy, 10 * time.Second},
		{"short MaxWait", ReaderConfig{MaxWait: 100 * time.Millisecond, MaxFollowerLag: -1}, fetchengine.Want{Follower: true}, busy, 100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.wait, engineMaxWait(&c.cfg, c.want, c.quiet))
		})
	}
}

// resolverFunc is a Resolver whose value cannot be compared.
type resolverFunc func(ctx context.Context, host string) ([]string, error)

func (f resolverFunc) LookupHost(ctx context.Context, host string) ([]string, error) {
	return f(ctx, host)
}

// resolverList is a Resolver holding a slice: not comparable either.
type resolverList struct{ addrs []string }

func (r resolverList) LookupHost(context.Context, string) ([]string, error) { return r.addrs, nil }

func TestDialerIdentity(t *testing.T) {
	tlsConfig := &tls.Config{ServerName: "kafka"}
	scram1, err := scram.Mechanism(scram.SHA256, "u", "p")
	require.NoError(t, err)
	scram2, err := scram.Mechanism(scram.SHA256, "u", "p")
	require.NoError(t, err)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) { return nil, nil }
	base := func() *Dialer {
		return &Dialer{ClientID: "c", Timeout: 5 * time.Second, DualStack: true, TLS: tlsConfig,
			SASLMechanism: plain.Mechanism{Username: "u", Password: "p"}, RackID: "a"}
	}
	with := func(f func(*Dialer)) *Dialer { d := base(); f(d); return d }
	for _, tc := range []struct {
		name string
		a, b *Dialer
		same bool
	}{
		{"equal settings", base(), base(), true},
		{"the default and a copy of it", DefaultDialer, &Dialer{Timeout: 10 * time.Second, DualStack: true}, true},
		{"another client ID", base(), with(func(d *Dialer) { d.ClientID = "other" }), false},
		{"another rack", base(), with(func(d *Dialer) { d.RackID = "b" }), false},
		{"another timeout", base(), with(func(d *Dialer) { d.Timeout = time.Second }), false},
		{"another TLS config with equal fields", base(), with(func(d *Dialer) { d.TLS = &tls.Config{ServerName: "kafka"} }), false},
		{"other plain credentials", base(), with(func(d *Dialer) { d.SASLMechanism = plain.Mechanism{Username: "u", Password: "q"} }), false},
		{"one scram mechanism", with(func(d *Dialer) { d.SASLMechanism = scram1 }), with(func(d *Dialer) { d.SASLMechanism = scram1 }), true},
		{"two scram mechanisms made apart", with(func(d *Dialer) { d.SASLMechanism = scram1 }), with(func(d *Dialer) { d.SASLMechanism = scram2 }), false},
		{"a DialFunc each", with(func(d *Dialer) { d.DialFunc = dial }), with(func(d *Dialer) { d.DialFunc = dial }), false},
		{"uncomparable resolvers", with(func(d *Dialer) { d.Resolver = resolverFunc(nil) }), with(func(d *Dialer) { d.Resolver = resolverFunc(nil) }), false},
		{"resolvers holding slices", with(func(d *Dialer) { d.Resolver = resolverList{} }), with(func(d *Dialer) { d.Resolver = resolverList{} }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := dialerIdentityOf(tc.a), dialerIdentityOf(tc.b)
			// Usable as a map key without a panic, whatever the Dialer holds.
			m := map[dialerIdentity]int{a: 1}
			m[b]++
			assert.Equal(t, tc.same, a == b)
			assert.Equal(t, tc.same, len(m) == 1)
		})
	}
	d := base()
	assert.Equal(t, dialerIdentityOf(d), dialerIdentityOf(d), "a Dialer is always itself")
	withFunc := with(func(d *Dialer) { d.DialFunc = dial })
	assert.Equal(t, dialerIdentityOf(withFunc), dialerIdentityOf(withFunc))
}
