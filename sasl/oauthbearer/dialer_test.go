package oauthbearer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/sasl/oauthbearer"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const invalidToken = `{"status":"invalid_token"}`

// kafkaExchange behaves like Kafka's OAUTHBEARER server: it parses the
// client's initial response, accepts the valid token, and otherwise sends
// a JSON error, waits for 0x01, then fails with that error.
func kafkaExchange(valid string, seen chan<- map[string]string) fakebroker.SASLExchange {
	rejected := false
	return func(token []byte) ([]byte, bool, error) {
		if rejected {
			if !bytes.Equal(token, []byte{0x01}) {
				return nil, false, fmt.Errorf("want 0x01 after the error challenge, got %q", token)
			}
			return nil, false, errors.New(invalidToken)
		}
		fields, err := parseInitialResponse(token)
		if err != nil {
			return nil, false, err
		}
		seen <- fields
		if fields["auth"] != "Bearer "+valid {
			rejected = true
			return []byte(invalidToken), false, nil
		}
		return nil, true, nil
	}
}

// parseInitialResponse reads "n,," 0x01 (key=value 0x01)* 0x01.
func parseInitialResponse(ir []byte) (map[string]string, error) {
	s := string(ir)
	if !strings.HasPrefix(s, "n,,\x01") || !strings.HasSuffix(s, "\x01\x01") {
		return nil, fmt.Errorf("malformed initial response %q", s)
	}
	fields := map[string]string{}
	for _, kv := range strings.Split(s[len("n,,\x01"):len(s)-2], "\x01") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("malformed pair %q", kv)
		}
		fields[k] = v
	}
	return fields, nil
}

func oauthBroker(t *testing.T, valid string) (addr string, seen <-chan map[string]string) {
	got := make(chan map[string]string, 16)
	c := fakebroker.NewCluster(t, fakebroker.Config{SASLMechanisms: map[string]func() fakebroker.SASLExchange{
		"OAUTHBEARER": func() fakebroker.SASLExchange { return kafkaExchange(valid, got) },
	}})
	c.CreateTopic("orders", 1, 1)
	return c.Broker(1).Addr(), got
}

func dial(addr string, p oauthbearer.TokenProvider) (*kafka.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := &kafka.Dialer{Timeout: 10 * time.Second, SASLMechanism: oauthbearer.Mechanism{TokenProvider: p}}
	return d.DialContext(ctx, "tcp", addr)
}

func TestDialerAuthenticatesWithToken(t *testing.T) {
	addr, seen := oauthBroker(t, "good.jwt.sig")
	hadDeadline := make(chan bool, 1)
	provider := oauthbearer.TokenProviderFunc(func(ctx context.Context) (oauthbearer.Token, error) {
		_, ok := ctx.Deadline()
		hadDeadline <- ok
		return oauthbearer.Token{Value: "good.jwt.sig", Extensions: map[string]string{"logicalCluster": "lkc-1"}}, nil
	})
	conn, err := dial(addr, provider)
	require.NoError(t, err)
	defer conn.Close()
	parts, err := conn.ReadPartitions("orders")
	require.NoError(t, err, "the broker serves only authenticated connections")
	assert.Len(t, parts, 1)

	assert.True(t, <-hadDeadline, "the provider gets the dial's context")
	assert.Equal(t, map[string]string{"auth": "Bearer good.jwt.sig", "logicalCluster": "lkc-1"}, <-seen)
}

// A rejected token ends as the broker's SASL_AUTHENTICATION_FAILED with its
// JSON error, which Kafka sends only once the client answered the error
// challenge with 0x01.
func TestDialerReportsRejectedToken(t *testing.T) {
	addr, seen := oauthBroker(t, "good.jwt.sig")
	_, err := dial(addr, oauthbearer.TokenProviderFunc(func(context.Context) (oauthbearer.Token, error) {
		return oauthbearer.Token{Value: "expired.jwt.sig"}, nil
	}))
	require.ErrorIs(t, err, kafka.SASLAuthenticationFailed)
	assert.ErrorContains(t, err, "invalid_token")
	assert.ErrorContains(t, err, "OAUTHBEARER")
	assert.NotContains(t, err.Error(), "expired.jwt.sig")
	<-seen
}

func TestDialerReportsProviderFailure(t *testing.T) {
	addr, seen := oauthBroker(t, "good.jwt.sig")
	errIdP := errors.New("token endpoint: 503")
	_, err := dial(addr, oauthbearer.TokenProviderFunc(func(context.Context) (oauthbearer.Token, error) {
		return oauthbearer.Token{}, errIdP
	}))
	require.ErrorIs(t, err, errIdP)
	assert.ErrorContains(t, err, "getting a token")
	assert.ErrorContains(t, err, addr)
	assert.Empty(t, seen, "nothing reached the broker")
}
