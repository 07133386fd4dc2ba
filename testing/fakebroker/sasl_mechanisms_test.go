package fakebroker_test

import (
	"errors"
	"testing"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/require"
)

// A mechanism from Config.SASLMechanisms runs one exchange per connection:
// a challenge and a second token, an error message on failure.
func TestSASLMechanismExchange(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{SASLMechanisms: map[string]func() fakebroker.SASLExchange{
		"TWO-STEP": func() fakebroker.SASLExchange {
			step := 0
			return func(token []byte) ([]byte, bool, error) {
				step++
				switch {
				case step == 1 && string(token) == "hello":
					return []byte("prove it"), false, nil
				case step == 2 && string(token) == "proof":
					return nil, true, nil
				}
				return nil, false, errors.New("bad token " + string(token))
			}
		},
	}})
	addr := c.Broker(1).Addr()

	cl := dial(t, addr)
	hs := cl.roundTrip(&protocol.SaslHandshakeRequest{Mechanism: "PLAIN"}, 1).(*protocol.SaslHandshakeResponse)
	require.Equal(t, int16(33), hs.ErrorCode, "PLAIN is not enabled")
	require.Equal(t, []string{"TWO-STEP"}, hs.Mechanisms)

	cl = dial(t, addr)
	cl.roundTrip(&protocol.SaslHandshakeRequest{Mechanism: "TWO-STEP"}, 1)
	r := cl.roundTrip(&protocol.SaslAuthenticateRequest{AuthBytes: []byte("hello")}, 1).(*protocol.SaslAuthenticateResponse)
	require.Zero(t, r.ErrorCode)
	require.Equal(t, "prove it", string(r.AuthBytes))
	_, err := cl.tryRoundTrip(&protocol.MetadataRequest{}, 9)
	require.Error(t, err, "metadata answered in the middle of the exchange")

	cl = dial(t, addr)
	cl.roundTrip(&protocol.SaslHandshakeRequest{Mechanism: "TWO-STEP"}, 1)
	cl.roundTrip(&protocol.SaslAuthenticateRequest{AuthBytes: []byte("hello")}, 1)
	r = cl.roundTrip(&protocol.SaslAuthenticateRequest{AuthBytes: []byte("guess")}, 1).(*protocol.SaslAuthenticateResponse)
	require.Equal(t, int16(58), r.ErrorCode)
	require.NotNil(t, r.ErrorMessage)
	require.Equal(t, "bad token guess", *r.ErrorMessage)
	_, err = cl.tryRoundTrip(&protocol.ApiVersionsRequest{}, 3)
	require.Error(t, err, "connection still open after a failed authentication")

	cl = dial(t, addr)
	cl.roundTrip(&protocol.SaslHandshakeRequest{Mechanism: "TWO-STEP"}, 1)
	cl.roundTrip(&protocol.SaslAuthenticateRequest{AuthBytes: []byte("hello")}, 1)
	r = cl.roundTrip(&protocol.SaslAuthenticateRequest{AuthBytes: []byte("proof")}, 1).(*protocol.SaslAuthenticateResponse)
	require.Zero(t, r.ErrorCode)
	cl.roundTrip(&protocol.MetadataRequest{}, 9)
}
