package kafka

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/sasl/plain"
	"github.com/rackfetch/kafka-go/sasl/scram"
)

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
