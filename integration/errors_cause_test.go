package integration

// Errors name their cause: each bad input (wrong passwords, unknown host, TLS against a
// plaintext port and the reverse, connection refused, an HTTP server, a TLS server; also an untrusted CA, SASL against a
// plaintext listener, and two seeds of which one is unknown and one refusing) through the Reader in partition
// mode, the group Reader, ConsumerGroup, the Writer and the Client. The error must reach the typed cause with
// errors.Is/As where there is one, name it in its text, and come well before the caller's deadline when
// no retry helps. A transient failure (connection refused) is retried until the caller's deadline, whose
// error then carries the last failure.
//
// TestErrorCauseLoopback needs no cluster (loopback servers); TestErrorCauseCluster needs the real
// cluster's SASL and TLS listeners.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/sasl"
)

// causeInput is a bad configuration and what its error must show.
type causeInput struct {
	name    string
	brokers []string
	tls     *tls.Config
	sasl    sasl.Mechanism
	// permanent: no retry helps, so the error must come well before the caller's deadline.
	permanent bool
	// mentions are substrings the error's text must contain (the broker's address at least).
	mentions []string
	// cause checks the typed cause with errors.Is/As.
	cause func(t *testing.T, err error)
	// serial: the input's subtests run alone, before the parallel ones.
	// An HTTP server is named by its answer to a probe the client waits
	// 300 ms for; with every other subtest running beside it under the
	// race detector, the test's own server answered later than that.
	serial bool
}

// causeAPI runs one API against an input until it fails or ctx ends.
type causeAPI struct {
	name string
	run  func(ctx context.Context, in causeInput) error
}

const (
	causeDeadline = 20 * time.Second // the caller's context, for permanent failures
	causeBound    = 8 * time.Second  // ... which must be reported by then
	causeShort    = 4 * time.Second  // the caller's context for transient failures
)

func causeDialer(in causeInput) *kafka.Dialer {
	return &kafka.Dialer{ClientID: "kafka-go-cause-test", Timeout: 5 * time.Second, TLS: in.tls, SASLMechanism: in.sasl}
}

func causeAPIs() []causeAPI {
	const topic = "kt-error-cause" // never reached: every input fails before any request
	return []causeAPI{
		{"Reader", func(ctx context.Context, in causeInput) error {
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: in.brokers, Topic: topic, Dialer: causeDialer(in)})
			defer r.Close()
			_, err := r.ReadMessage(ctx)
			return err
		}},
		{"GroupReader", func(ctx context.Context, in causeInput) error {
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: in.brokers, Topic: topic, GroupID: "kt-error-cause", Dialer: causeDialer(in)})
			defer r.Close()
			_, err := r.ReadMessage(ctx)
			return err
		}},
		{"ConsumerGroup", func(ctx context.Context, in causeInput) error {
			cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{ID: "kt-error-cause", Brokers: in.brokers, Topics: []string{topic}, Dialer: causeDialer(in)})
			if err != nil {
				return err
			}
			defer cg.Close()
			_, err = cg.Next(ctx)
			return err
		}},
		{"Writer", func(ctx context.Context, in causeInput) error {
			tr := &kafka.Transport{ClientID: "kafka-go-cause-test", DialTimeout: 5 * time.Second, TLS: in.tls, SASL: in.sasl}
			defer tr.CloseIdleConnections()
			w := &kafka.Writer{Addr: kafka.TCP(in.brokers...), Topic: topic, Transport: tr}
			defer w.Close()
			return w.WriteMessages(ctx, kafka.Message{Value: []byte("x")})
		}},
		{"Client", func(ctx context.Context, in causeInput) error {
			tr := &kafka.Transport{ClientID: "kafka-go-cause-test", DialTimeout: 5 * time.Second, TLS: in.tls, SASL: in.sasl}
			defer tr.CloseIdleConnections()
			c := &kafka.Client{Addr: kafka.TCP(in.brokers...), Transport: tr}
			_, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
			return err
		}},
	}
}

func runCauseMatrix(t *testing.T, inputs []causeInput) {
	for _, in := range inputs {
		for _, api := range causeAPIs() {
			in, api := in, api
			t.Run(in.name+"/"+api.name, func(t *testing.T) {
				if !in.serial {
					t.Parallel()
				}
				deadline := causeShort
				if in.permanent {
					deadline = causeDeadline
				}
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				start := time.Now()
				err := api.run(ctx, in)
				took := time.Since(start)
				require.Error(t, err)
				t.Logf("%s after %v: %v", t.Name(), took.Round(time.Millisecond), err)
				if in.permanent {
					assert.Less(t, took, causeBound, "no retry helps: the error must come before the caller's deadline (%v)", deadline)
					assert.NotErrorIs(t, err, context.DeadlineExceeded, "the cause, not a timeout")
				} else {
					assert.Less(t, took, deadline+2*time.Second, "the caller's deadline ends the retries")
				}
				for _, s := range in.mentions {
					assert.Contains(t, err.Error(), s)
				}
				in.cause(t, err)
			})
		}
	}
}

// peerIs checks that err names the peer as want ("HTTP", "TLS", "plaintext").
func peerIs(want string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		var pe *kafka.PeerProtocolError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, want, pe.Peer)
		assert.Contains(t, err.Error(), pe.Addr)
	}
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestErrorCauseLoopback(t *testing.T) {
	httpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "not kafka", http.StatusNotFound)
	}))
	t.Cleanup(httpSrv.Close)
	httpAddr := strings.TrimPrefix(httpSrv.URL, "http://")
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")
	refused := closedPort(t)
	const noHost = "kafka-broker.invalid:9092"

	runCauseMatrix(t, []causeInput{
		{
			name: "UnknownHost", brokers: []string{noHost}, permanent: true,
			mentions: []string{"kafka-broker.invalid"},
			cause: func(t *testing.T, err error) {
				var dnsErr *net.DNSError
				require.ErrorAs(t, err, &dnsErr)
				assert.True(t, dnsErr.IsNotFound, "%v", dnsErr)
			},
		},
		{
			name: "ConnectionRefused", brokers: []string{refused},
			mentions: []string{refused},
			cause: func(t *testing.T, err error) {
				var opErr *net.OpError
				require.ErrorAs(t, err, &opErr)
				assert.ErrorIs(t, err, syscall.ECONNREFUSED)
			},
		},
		{
			// One seed unknown, one refusing: the refusing broker may come back, so this is retried, and the
			// error names both.
			name: "UnknownHostAndRefused", brokers: []string{noHost, refused},
			mentions: []string{"kafka-broker.invalid", refused},
			cause: func(t *testing.T, err error) {
				var dnsErr *net.DNSError
				require.ErrorAs(t, err, &dnsErr)
				assert.ErrorIs(t, err, syscall.ECONNREFUSED)
			},
		},
		{
			name: "TLSServer", brokers: []string{tlsAddr}, permanent: true,
			mentions: []string{tlsAddr, "TLS"},
			cause:    peerIs("TLS"),
		},
		{
			name: "HTTPServer", brokers: []string{httpAddr}, permanent: true, serial: true,
			mentions: []string{httpAddr, "HTTP"},
			cause:    peerIs("HTTP"),
		},
	})
}

func TestErrorCauseCluster(t *testing.T) {
	c := requireRackCluster(t)
	require.NotEmpty(t, c.SASLBrokers, "KAFKA_SASL_BROKERS")
	require.NotEmpty(t, c.TLSBrokers, "KAFKA_TLS_BROKERS")
	const wrong = "not-the-password-5c1e"
	var inputs []causeInput
	for _, u := range saslUsers(c) {
		inputs = append(inputs, causeInput{
			name: "WrongPassword" + strings.ReplaceAll(u.mechanism, "-", ""), brokers: c.SASLBrokers,
			sasl: mechanism(t, u.mechanism, u.cred.User, wrong), permanent: true,
			mentions: []string{u.mechanism, "127.0.0.1:"},
			cause: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, kafka.SASLAuthenticationFailed)
				assert.NotContains(t, err.Error(), wrong)
			},
		})
	}
	inputs = append(inputs,
		causeInput{
			name: "TLSToPlaintextPort", brokers: c.Brokers, tls: testTLSConfig(t, c), permanent: true,
			mentions: []string{"TLS", c.Brokers[0]},
			cause:    peerIs("plaintext"),
		},
		causeInput{
			name: "TLSUntrustedCA", brokers: c.TLSBrokers, tls: &tls.Config{MinVersion: tls.VersionTLS12}, permanent: true,
			mentions: []string{"TLS handshake", c.TLSBrokers[0]},
			cause: func(t *testing.T, err error) {
				var unknown x509.UnknownAuthorityError
				require.ErrorAs(t, err, &unknown)
			},
		},
		causeInput{
			name: "SASLToPlaintextPort", brokers: c.Brokers, sasl: mechanism(t, "PLAIN", c.Plain.User, c.Plain.Password), permanent: true,
			mentions: []string{"does not take SASL", c.Brokers[0]},
			cause: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, kafka.IllegalSASLState)
			},
		},
		causeInput{
			name: "PlaintextToTLSPort", brokers: c.TLSBrokers, permanent: true,
			mentions: []string{"TLS", c.TLSBrokers[0]},
			cause:    peerIs("TLS"),
		},
	)
	runCauseMatrix(t, inputs)
}

// A TLS handshake the peer closes is named a plaintext listener only when
// the port answers Kafka without TLS: a server that just drops connections
// (a broker shutting down) is a transient failure, retried.
func TestErrorCauseTLSHandshakeClosedNotKafka(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	d := &kafka.Dialer{Timeout: 3 * time.Second, TLS: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec
	_, err = d.DialContext(context.Background(), "tcp", ln.Addr().String())
	require.Error(t, err)
	var pe *kafka.PeerProtocolError
	assert.False(t, errors.As(err, &pe), "a peer that drops every connection named %v", err)
	assert.Contains(t, err.Error(), "TLS handshake with")
}
