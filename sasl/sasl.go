// Package sasl defines the interfaces the client uses to run a SASL
// authentication exchange with a broker. Implementations live in the
// sub-packages (plain, scram); users can provide their own.
package sasl

import "context"

// Mechanism is one SASL mechanism configured with its credentials. The
// Dialer calls Start once per connection, so a Mechanism must be reusable
// and safe for concurrent use.
type Mechanism interface {
	// Name is the mechanism name sent in the SaslHandshake request, e.g.
	// "PLAIN" or "SCRAM-SHA-512". It must match one the broker enables.
	Name() string

	// Start begins an exchange. It returns the state machine for this
	// connection and the initial response to send. A nil ir means the
	// mechanism has no initial response; an empty non-nil ir is an empty
	// initial response that still has to be sent. A non-nil error aborts
	// the authentication.
	Start(ctx context.Context) (sess StateMachine, ir []byte, err error)
}

// StateMachine drives a single exchange. It belongs to one connection and
// does not need to be safe for concurrent use.
//
// The caller sends the initial response from Mechanism.Start, then feeds
// each server challenge to Next and sends back the returned response, until
// Next reports done or returns an error.
type StateMachine interface {
	// Next consumes a server challenge. done reports that authentication
	// completed successfully; a non-nil err aborts it.
	Next(ctx context.Context, challenge []byte) (done bool, response []byte, err error)
}

// Metadata describes the connection being authenticated, for mechanisms that
// need it (for example to sign a request for a particular broker).
type Metadata struct {
	// Host is the address of the broker being authenticated against.
	Host string
	Port int
}

type ctxKey struct{}

// WithMetadata returns a copy of ctx carrying m.
func WithMetadata(ctx context.Context, m *Metadata) context.Context {
	return context.WithValue(ctx, ctxKey{}, m)
}

// MetadataFromContext returns the Metadata stored by WithMetadata, or nil.
func MetadataFromContext(ctx context.Context) *Metadata {
	m, _ := ctx.Value(ctxKey{}).(*Metadata)
	return m
}
