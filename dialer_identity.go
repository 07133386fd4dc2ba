package kafka

import (
	"crypto/tls"
	"net"
	"reflect"
	"time"

	"github.com/rackfetch/kafka-go/sasl"
)

// dialerIdentity tells when two Dialers dial the same way, so that the
// Readers given them may share a fetch engine. Programs often build a
// Dialer per Reader (a fresh &kafka.Dialer{...} in each config): compared
// by pointer, each such Reader got an engine, connections and
// single-partition fetches of its own where equal settings need one engine.
//
// Settings compare by value where that is safe: strings, durations, and
// the TLS config, resolver, local address and SASL mechanism by what the
// interface or pointer holds (two scram mechanisms made apart differ; two
// plain ones with the same credentials do not). A DialFunc cannot be
// compared (closures with one code pointer may capture different
// proxies), nor can an interface holding an uncomparable value: such a
// Dialer is then only itself (as is one a test gave its own idle timeout).
type dialerIdentity struct {
	only  *Dialer // set when the settings cannot be compared
	value dialerSettings
}

type dialerSettings struct {
	clientID, transactionalID, rackID string
	timeout, fallbackDelay, keepAlive time.Duration
	deadline                          time.Time
	dualStack                         bool
	localAddr                         net.Addr
	resolver                          Resolver
	tls                               *tls.Config
	sasl                              sasl.Mechanism
}

func dialerIdentityOf(d *Dialer) dialerIdentity {
	if _, test := engineIdleTimeouts.Load(d); test || d.DialFunc != nil || !comparableValue(d.LocalAddr) || !comparableValue(d.Resolver) || !comparableValue(d.SASLMechanism) {
		return dialerIdentity{only: d}
	}
	return dialerIdentity{value: dialerSettings{
		clientID: d.ClientID, transactionalID: d.TransactionalID, rackID: d.RackID,
		timeout: d.Timeout, fallbackDelay: d.FallbackDelay, keepAlive: d.KeepAlive,
		deadline: d.Deadline, dualStack: d.DualStack,
		localAddr: d.LocalAddr, resolver: d.Resolver, tls: d.TLS, sasl: d.SASLMechanism,
	}}
}

// comparableValue reports whether v can be compared with == without a
// panic (what it holds, interfaces inside included).
func comparableValue(v any) bool {
	return v == nil || reflect.ValueOf(v).Comparable()
}
