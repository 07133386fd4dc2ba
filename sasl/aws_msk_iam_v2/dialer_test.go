package aws_msk_iam_v2

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mskBroker is a fake broker that checks AWS_MSK_IAM payloads as MSK does,
// with the secret of testKeyID, and hands each payload's fields to the test.
func mskBroker(t *testing.T) (addr string, payloads <-chan map[string]string) {
	got := make(chan map[string]string, 16)
	c := fakebroker.NewCluster(t, fakebroker.Config{SASLMechanisms: map[string]func() fakebroker.SASLExchange{
		"AWS_MSK_IAM": func() fakebroker.SASLExchange {
			return func(token []byte) ([]byte, bool, error) {
				p, err := verifyPayload(token, testKeyID, testSecret, time.Now())
				got <- p
				if err != nil {
					return nil, false, errors.New("[test-request] Access denied: " + err.Error())
				}
				return []byte(`{"version":"2020_10_22","request-id":"test-request"}`), true, nil
			}
		},
	}})
	c.CreateTopic("orders", 1, 1)
	return c.Broker(1).Addr(), got
}

func dial(addr string, m *Mechanism) (*kafka.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := &kafka.Dialer{Timeout: 10 * time.Second, SASLMechanism: m}
	return d.DialContext(ctx, "tcp", addr)
}

func TestDialerAuthenticatesWithMSKIAM(t *testing.T) {
	addr, payloads := mskBroker(t)
	host, _, err := net.SplitHostPort(addr)
	require.NoError(t, err)

	for _, token := range []string{"", "session-token/+="} {
		conn, err := dial(addr, &Mechanism{Credentials: staticCredentials(token), Region: "us-east-1"})
		require.NoError(t, err, "session token %q", token)
		// The broker serves only authenticated connections.
		parts, err := conn.ReadPartitions("orders")
		require.NoError(t, err)
		assert.Len(t, parts, 1)
		require.NoError(t, conn.Close())

		p := <-payloads
		assert.Equal(t, host, p["host"], "signed for the broker dialled")
		if token == "" {
			assert.NotContains(t, p, "x-amz-security-token")
		} else {
			assert.Equal(t, token, p["x-amz-security-token"])
		}
	}
}

func TestDialerReportsRejectedSignature(t *testing.T) {
	addr, payloads := mskBroker(t)
	wrong := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: "not-the-secret"}, nil
	})
	_, err := dial(addr, &Mechanism{Credentials: wrong, Region: "us-east-1"})
	require.ErrorIs(t, err, kafka.SASLAuthenticationFailed)
	assert.ErrorContains(t, err, "Access denied")
	assert.ErrorContains(t, err, "AWS_MSK_IAM")
	<-payloads
}

// A credentials provider that fails, or returns expired credentials, fails
// the dial with an error saying so, before anything is sent to the broker.
func TestDialerReportsCredentialFailures(t *testing.T) {
	addr, payloads := mskBroker(t)
	errSTS := errors.New("sts: AssumeRole denied")
	failing := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return aws.Credentials{}, errSTS })
	_, err := dial(addr, &Mechanism{Credentials: failing, Region: "us-east-1"})
	require.ErrorIs(t, err, errSTS)
	assert.ErrorContains(t, err, "retrieving AWS credentials")
	assert.ErrorContains(t, err, addr)

	expired := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret, CanExpire: true, Expires: time.Now().Add(-time.Second), Source: "sts"}, nil
	})
	_, err = dial(addr, &Mechanism{Credentials: expired, Region: "us-east-1"})
	require.ErrorContains(t, err, "expired")
	assert.ErrorContains(t, err, addr)

	assert.Empty(t, payloads, "no payload reached the broker")
}
