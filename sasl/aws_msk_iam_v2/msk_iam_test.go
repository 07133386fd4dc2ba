package aws_msk_iam_v2

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/rackfetch/kafka-go/sasl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testKeyID  = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

var testSignTime = time.Date(2021, 10, 14, 13, 5, 0, 0, time.UTC)

func staticCredentials(sessionToken string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret, SessionToken: sessionToken, Source: "test"}, nil
	})
}

func brokerContext(host string) context.Context {
	return sasl.WithMetadata(context.Background(), &sasl.Metadata{Host: host, Port: 9098})
}

func start(t *testing.T, m *Mechanism, host string) map[string]string {
	t.Helper()
	sess, ir, err := m.Start(brokerContext(host))
	require.NoError(t, err)
	require.Same(t, m, sess)
	var p map[string]string
	require.NoError(t, json.Unmarshal(ir, &p))
	return p
}

// The payload is the presigned request's parameters, with a signature
// that matches the one computed here from the SigV4 definition.
func TestPayloadWithFixedClockAndCredentials(t *testing.T) {
	m := &Mechanism{Credentials: staticCredentials(""), Region: "eu-west-1", SignTime: testSignTime}
	p := start(t, m, "b-1.demo.kafka.eu-west-1.amazonaws.com")

	want := map[string]string{
		"version":             "2020_10_22",
		"host":                "b-1.demo.kafka.eu-west-1.amazonaws.com",
		"user-agent":          defaultUserAgent,
		"action":              "kafka-cluster:Connect",
		"x-amz-algorithm":     "AWS4-HMAC-SHA256",
		"x-amz-credential":    "AKIDEXAMPLE/20211014/eu-west-1/kafka-cluster/aws4_request",
		"x-amz-date":          "20211014T130500Z",
		"x-amz-expires":       "300",
		"x-amz-signedheaders": "host",
	}
	want["x-amz-signature"] = sigv4Request{
		method: "GET", path: "/",
		query: map[string]string{
			"Action": "kafka-cluster:Connect", "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
			"X-Amz-Credential": want["x-amz-credential"], "X-Amz-Date": "20211014T130500Z",
			"X-Amz-Expires": "300", "X-Amz-SignedHeaders": "host",
		},
		headers:     map[string]string{"host": want["host"]},
		payloadHash: sha256Hex(""), amzDate: "20211014T130500Z", region: "eu-west-1", service: "kafka-cluster",
	}.signature(testSecret)
	require.Equal(t, want, p)
}

// A session token is sent and signed.
func TestPayloadSignsSessionToken(t *testing.T) {
	const token = "FwoGZXIvYXdzE+token/with=chars"
	m := &Mechanism{Credentials: staticCredentials(token), Region: "us-east-1", SignTime: testSignTime}
	_, ir, err := m.Start(brokerContext("localhost"))
	require.NoError(t, err)

	p, err := verifyPayload(ir, testKeyID, testSecret, testSignTime)
	require.NoError(t, err)
	assert.Equal(t, token, p["x-amz-security-token"])

	// Without the token the signature no longer matches: it covers it.
	delete(p, "x-amz-security-token")
	stripped, err := json.Marshal(p)
	require.NoError(t, err)
	_, err = verifyPayload(stripped, testKeyID, testSecret, testSignTime)
	require.ErrorContains(t, err, "signature")
}

func TestPayloadOptions(t *testing.T) {
	m := &Mechanism{
		Credentials: staticCredentials(""), Region: "us-east-1", SignTime: testSignTime,
		Expiry: 90 * time.Second, UserAgent: "my-app/1.0",
	}
	p := start(t, m, "::1")
	assert.Equal(t, "90", p["x-amz-expires"])
	assert.Equal(t, "my-app/1.0", p["user-agent"])
	assert.Equal(t, "[::1]", p["host"], "an IPv6 literal is signed as a URL host")
	_, err := verifyPayload(mustJSON(t, p), testKeyID, testSecret, testSignTime.Add(time.Minute))
	require.NoError(t, err)
	_, err = verifyPayload(mustJSON(t, p), testKeyID, testSecret, testSignTime.Add(91*time.Second))
	require.ErrorContains(t, err, "not valid", "the broker-side check honours the expiry")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestNewMechanismUsesConfig(t *testing.T) {
	creds := staticCredentials("")
	m := NewMechanism(aws.Config{Region: "ap-south-1", Credentials: creds})
	assert.Equal(t, "AWS_MSK_IAM", m.Name())
	assert.Equal(t, "ap-south-1", m.Region)
	assert.NotNil(t, m.Signer)
	assert.NotNil(t, m.Credentials)
	done, resp, err := m.Next(context.Background(), []byte(`{"version":"2020_10_22","request-id":"x"}`))
	assert.True(t, done)
	assert.Nil(t, resp)
	assert.NoError(t, err)
}

func TestStartErrors(t *testing.T) {
	errNoRole := errors.New("no role to assume")
	failing := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return aws.Credentials{}, errNoRole })
	expired := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret, CanExpire: true, Expires: time.Now().Add(-time.Minute), Source: "sts"}, nil
	})
	for _, tc := range []struct {
		name string
		m    *Mechanism
		ctx  context.Context
		want string
		is   error
	}{
		{name: "no metadata", m: &Mechanism{Credentials: staticCredentials(""), Region: "us-east-1"}, ctx: context.Background(), want: "no broker host"},
		{name: "no credentials", m: &Mechanism{Region: "us-east-1"}, ctx: brokerContext("h"), want: "no credentials provider"},
		{name: "no region", m: &Mechanism{Credentials: staticCredentials("")}, ctx: brokerContext("h"), want: "no AWS region"},
		{name: "provider fails", m: &Mechanism{Credentials: failing, Region: "us-east-1"}, ctx: brokerContext("h"), want: "retrieving AWS credentials", is: errNoRole},
		{name: "expired", m: &Mechanism{Credentials: expired, Region: "us-east-1"}, ctx: brokerContext("h"), want: "credentials of sts expired at"},
		{name: "sub-second expiry", m: &Mechanism{Credentials: staticCredentials(""), Region: "us-east-1", Expiry: time.Millisecond}, ctx: brokerContext("h"), want: "under a second"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess, ir, err := tc.m.Start(tc.ctx)
			require.ErrorContains(t, err, tc.want)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			assert.Nil(t, sess)
			assert.Nil(t, ir)
		})
	}
}

// One Mechanism signs for many connections at once (the Dialer shares it).
func TestStartConcurrently(t *testing.T) {
	m := &Mechanism{Credentials: staticCredentials("tok"), Region: "us-east-1"}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ir, err := m.Start(brokerContext("localhost"))
			if err == nil {
				_, err = verifyPayload(ir, testKeyID, testSecret, time.Now())
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
