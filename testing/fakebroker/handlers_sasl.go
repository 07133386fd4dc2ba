package fakebroker

import (
	"bytes"
	"sort"

	"github.com/rackfetch/kafka-go/protocol"
)

// requiresSASL reports whether clients must authenticate.
func (c *Cluster) requiresSASL() bool {
	return c.cfg.SASL != nil || len(c.cfg.SASLMechanisms) > 0
}

// saslHandshake accepts PLAIN when the cluster has a SASL user, and the
// mechanisms of Config.SASLMechanisms.
func (b *Broker) saslHandshake(c *conn, r *protocol.SaslHandshakeRequest) *protocol.SaslHandshakeResponse {
	resp := &protocol.SaslHandshakeResponse{}
	if b.cluster.cfg.SASL != nil {
		resp.Mechanisms = []string{"PLAIN"}
	}
	for name := range b.cluster.cfg.SASLMechanisms {
		resp.Mechanisms = append(resp.Mechanisms, name)
	}
	sort.Strings(resp.Mechanisms)
	switch start := b.cluster.cfg.SASLMechanisms[r.Mechanism]; {
	case start != nil:
		c.exchange = start()
	case r.Mechanism == "PLAIN" && b.cluster.cfg.SASL != nil:
	default:
		resp.ErrorCode = errUnsupportedSASLMech
		return resp
	}
	c.mechanism = r.Mechanism
	return resp
}

// saslAuthenticate runs a step of the exchange after a handshake.
func (b *Broker) saslAuthenticate(c *conn, r *protocol.SaslAuthenticateRequest) *protocol.SaslAuthenticateResponse {
	if c.mechanism == "" {
		msg := "SaslAuthenticate before SaslHandshake"
		return &protocol.SaslAuthenticateResponse{ErrorCode: errIllegalSASLState, ErrorMessage: &msg}
	}
	if c.exchange != nil {
		return c.step(r.AuthBytes)
	}
	if !b.checkPlain(r.AuthBytes) {
		return c.failSASL("Authentication failed: Invalid username or password")
	}
	c.authenticated = true
	return &protocol.SaslAuthenticateResponse{AuthBytes: []byte{}}
}

// step feeds a token to the connection's exchange.
func (c *conn) step(token []byte) *protocol.SaslAuthenticateResponse {
	challenge, done, err := c.exchange(token)
	if err != nil {
		return c.failSASL(err.Error())
	}
	if challenge == nil {
		challenge = []byte{}
	}
	c.authenticated = done
	return &protocol.SaslAuthenticateResponse{AuthBytes: challenge}
}

// failSASL answers a failed authentication, after which Kafka closes the
// connection.
func (c *conn) failSASL(msg string) *protocol.SaslAuthenticateResponse {
	c.closeAfter = true
	return &protocol.SaslAuthenticateResponse{ErrorCode: errSASLAuthFailed, ErrorMessage: &msg}
}

// checkPlain verifies a SASL/PLAIN token: [authzid] NUL user NUL password.
func (b *Broker) checkPlain(token []byte) bool {
	want := b.cluster.cfg.SASL
	if want == nil {
		return false
	}
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return false
	}
	return string(parts[1]) == want.User && string(parts[2]) == want.Password
}
