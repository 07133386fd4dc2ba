package fakebroker

import (
	"bytes"

	"github.com/rackfetch/kafka-go/protocol"
)

// saslHandshake accepts PLAIN when the cluster has a SASL user.
func (b *Broker) saslHandshake(c *conn, r *protocol.SaslHandshakeRequest) *protocol.SaslHandshakeResponse {
	resp := &protocol.SaslHandshakeResponse{}
	if b.cluster.cfg.SASL != nil {
		resp.Mechanisms = []string{"PLAIN"}
	}
	if r.Mechanism != "PLAIN" || b.cluster.cfg.SASL == nil {
		resp.ErrorCode = errUnsupportedSASLMech
		return resp
	}
	c.mechanism = r.Mechanism
	return resp
}

// saslAuthenticate checks a PLAIN token after a handshake.
func (b *Broker) saslAuthenticate(c *conn, r *protocol.SaslAuthenticateRequest) *protocol.SaslAuthenticateResponse {
	if c.mechanism == "" {
		msg := "SaslAuthenticate before SaslHandshake"
		return &protocol.SaslAuthenticateResponse{ErrorCode: errIllegalSASLState, ErrorMessage: &msg}
	}
	if !b.checkPlain(r.AuthBytes) {
		msg := "Authentication failed: Invalid username or password"
		c.closeAfter = true // Kafka closes the connection after a failure
		return &protocol.SaslAuthenticateResponse{ErrorCode: errSASLAuthFailed, ErrorMessage: &msg}
	}
	c.authenticated = true
	return &protocol.SaslAuthenticateResponse{AuthBytes: []byte{}}
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
