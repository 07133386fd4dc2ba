package kafka

import (
	"context"
	"fmt"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/sasl"
)

// authenticateSASL runs the SaslHandshake and SaslAuthenticate exchange.
// Errors never carry the mechanism's credentials.
func (c *Conn) authenticateSASL(ctx context.Context, m sasl.Mechanism) error {
	hs, v, err := c.roundTrip(ctx, &protocol.SaslHandshakeRequest{Mechanism: m.Name()}, -1)
	if err != nil {
		return fmt.Errorf("SASL handshake: %w", err)
	}
	if code := hs.(*protocol.SaslHandshakeResponse).ErrorCode; code != 0 {
		enabled := hs.(*protocol.SaslHandshakeResponse).Mechanisms
		if Error(code) == IllegalSASLState && len(enabled) == 0 {
			// What a PLAINTEXT or SSL listener answers: it takes no SASL.
			return fmt.Errorf("SASL handshake for %s: the listener at %s does not take SASL (a PLAINTEXT or SSL listener?): %w", m.Name(), c.conn.RemoteAddr(), Error(code))
		}
		return fmt.Errorf("SASL handshake for %s (broker enables %v): %w", m.Name(), enabled, Error(code))
	}
	if v < 1 {
		// Handshake v0 means raw, unframed SASL tokens; every broker this
		// library supports speaks v1.
		return fmt.Errorf("SASL handshake v0 (unframed tokens) is not supported")
	}
	sess, state, err := m.Start(ctx)
	if err != nil {
		return fmt.Errorf("starting SASL %s: %w", m.Name(), err)
	}
	for done := false; !done; {
		resp, _, err := c.roundTrip(ctx, &protocol.SaslAuthenticateRequest{AuthBytes: state}, -1)
		if err != nil {
			if isUnexpectedEOF(err) {
				// Some brokers report a failed exchange by closing the socket.
				return fmt.Errorf("%w: broker closed the connection", SASLAuthenticationFailed)
			}
			return err
		}
		r := resp.(*protocol.SaslAuthenticateResponse)
		if r.ErrorCode != 0 {
			return makeError(r.ErrorCode, deref(r.ErrorMessage))
		}
		done, state, err = sess.Next(ctx, r.AuthBytes)
		if err != nil {
			return fmt.Errorf("SASL %s exchange: %w", m.Name(), err)
		}
	}
	return nil
}
