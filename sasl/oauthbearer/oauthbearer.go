// Package oauthbearer implements the SASL OAUTHBEARER mechanism (RFC 7628)
// as Kafka brokers take it (KIP-255): the client sends an OAuth 2 bearer
// token, with optional SASL extensions (KIP-342), that a TokenProvider gets
// for each connection. The token is a credential: use it only over TLS.
package oauthbearer

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/rackfetch/kafka-go/sasl"
)

// Token is a bearer token and the SASL extensions to send with it.
//
// Printing a Token with any fmt verb never shows its Value.
type Token struct {
	// Value is the token itself, e.g. a JWT.
	Value string
	// Extensions are key=value pairs the broker's callback handlers read
	// (for example a logical cluster id). Keys are letters only; "auth" is
	// reserved.
	Extensions map[string]string
}

// Format prints the extensions and hides the value.
func (t Token) Format(f fmt.State, verb rune) {
	value := `""`
	if t.Value != "" {
		value = "<redacted>"
	}
	fmt.Fprintf(f, "oauthbearer.Token{Value:%s, Extensions:%v}", value, t.Extensions)
}

// TokenProvider gets the token for a new connection. The Dialer calls it
// once per connection, with the dial's context, from many goroutines at
// once: a provider that fetches tokens remotely should cache them until
// shortly before they expire.
type TokenProvider interface {
	Token(ctx context.Context) (Token, error)
}

// TokenProviderFunc is a function used as a TokenProvider.
type TokenProviderFunc func(ctx context.Context) (Token, error)

// Token calls f.
func (f TokenProviderFunc) Token(ctx context.Context) (Token, error) { return f(ctx) }

// Mechanism authenticates with the tokens of a TokenProvider.
type Mechanism struct {
	TokenProvider TokenProvider
}

var _ sasl.Mechanism = Mechanism{}

// Name returns "OAUTHBEARER".
func (Mechanism) Name() string { return "OAUTHBEARER" }

// Start gets a token and returns the client's initial response:
// "n,," then "auth=Bearer <token>" and each extension, each followed by
// 0x01, and a final 0x01.
func (m Mechanism) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	if m.TokenProvider == nil {
		return nil, nil, errors.New("oauthbearer: no TokenProvider")
	}
	tok, err := m.TokenProvider.Token(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("oauthbearer: getting a token: %w", err)
	}
	ir, err := initialResponse(tok)
	if err != nil {
		return nil, nil, fmt.Errorf("oauthbearer: %w", err)
	}
	return &session{}, ir, nil
}

const separator = 0x01

func initialResponse(tok Token) ([]byte, error) {
	if !isBearerToken(tok.Value) {
		// The value is a credential: the error does not show it.
		return nil, fmt.Errorf("the token (%d bytes) is not an RFC 6750 bearer token: empty, or characters other than letters, digits and -._~+/ before trailing =", len(tok.Value))
	}
	keys := make([]string, 0, len(tok.Extensions))
	for k, v := range tok.Extensions {
		if k == "auth" || !isExtensionKey(k) {
			return nil, fmt.Errorf("extension key %q: want letters only, not \"auth\"", k)
		}
		if !isExtensionValue(v) {
			return nil, fmt.Errorf("extension %q: the value has characters other than printable ASCII, space, tab, CR and LF", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ir := append([]byte("n,,"), separator)
	ir = append(ir, "auth=Bearer "+tok.Value...)
	ir = append(ir, separator)
	for _, k := range keys {
		ir = append(ir, k+"="+tok.Extensions[k]...)
		ir = append(ir, separator)
	}
	return append(ir, separator), nil
}

// session is one connection's exchange.
type session struct {
	// rejection is the broker's error challenge, once answered.
	rejection string
}

// Next completes the exchange on an empty challenge. A broker that rejects
// the token sends a JSON error as the challenge and expects a lone 0x01,
// after which it fails the authentication with its own error.
func (s *session) Next(ctx context.Context, challenge []byte) (bool, []byte, error) {
	if s.rejection != "" {
		return false, nil, fmt.Errorf("oauthbearer: the broker rejected the token (%s) but did not end the exchange", s.rejection)
	}
	if len(challenge) == 0 {
		return true, nil, nil
	}
	s.rejection = string(challenge)
	return false, []byte{separator}, nil
}

func isBearerToken(v string) bool {
	i := 0
	for ; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(v); i++ {
		if v[i] != '=' {
			return false
		}
	}
	return true
}

func isExtensionKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

func isExtensionValue(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(0x21 <= c && c <= 0x7e || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			return false
		}
	}
	return true
}
