package integration

// Integration tests of the Dialer's SASL and TLS against the real cluster's SASL_PLAINTEXT, SSL and
// SASL_SSL listeners.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/sasl"
	"github.com/rackfetch/kafka-go/sasl/plain"
	"github.com/rackfetch/kafka-go/sasl/scram"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// testTLSConfig trusts the cluster's test CA.
func testTLSConfig(t *testing.T, c *ktesting.Cluster) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(c.TLSCA)
	if err != nil {
		t.Fatalf("reading KAFKA_TLS_CA: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", c.TLSCA)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

type saslUser struct {
	mechanism string
	cred      ktesting.Credentials
}

func saslUsers(c *ktesting.Cluster) []saslUser {
	return []saslUser{{"PLAIN", c.Plain}, {"SCRAM-SHA-256", c.SCRAM256}, {"SCRAM-SHA-512", c.SCRAM512}}
}

func mechanism(t *testing.T, name, user, password string) sasl.Mechanism {
	t.Helper()
	switch name {
	case "PLAIN":
		return plain.Mechanism{Username: user, Password: password}
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		algo := scram.SHA256
		if name == "SCRAM-SHA-512" {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, user, password)
		if err != nil {
			t.Fatalf("scram.Mechanism: %v", err)
		}
		return m
	}
	t.Fatalf("unknown mechanism %s", name)
	return nil
}

type listener struct {
	name  string
	addrs []string // in the order of the cluster's BrokerIDs
	tls   bool
}

// checkListener proves a Dialer on one listener: Metadata lists the three brokers with their racks at
// this listener's addresses, and a message produced through the partition leader (found and dialed on the
// same listener) reads back.
func checkListener(t *testing.T, c *ktesting.Cluster, l listener, d *kafka.Dialer, topic string) {
	t.Helper()
	want := map[int]string{}
	for i, id := range c.BrokerIDs {
		want[id] = l.addrs[i]
	}
	brokers, err := dial(t, d, l.addrs[0]).Brokers()
	if err != nil {
		t.Fatalf("Brokers over %s: %v", l.name, err)
	}
	if len(brokers) != len(want) {
		t.Errorf("Brokers over %s: %+v, want %d brokers", l.name, brokers, len(want))
	}
	for _, b := range brokers {
		if addr := net.JoinHostPort(b.Host, strconv.Itoa(b.Port)); addr != want[b.ID] || b.Rack != c.Rack(b.ID) {
			t.Errorf("Brokers over %s: broker %d at %s in rack %q, want %s in rack %q", l.name, b.ID, addr, b.Rack, want[b.ID], c.Rack(b.ID))
		}
	}

	conn := dialLeader(t, d, l.addrs[0], topic, 0)
	if addr := conn.RemoteAddr().String(); addr != want[conn.Broker().ID] {
		t.Errorf("leader Conn over %s: connected to %s, want broker %d's %s", l.name, addr, conn.Broker().ID, want[conn.Broker().ID])
	}
	msg := kafka.Message{Key: []byte(t.Name()), Value: []byte("over " + l.name), Headers: []kafka.Header{{Key: "listener", Value: []byte(l.name)}}}
	_, _, offset, _, err := conn.WriteCompressedMessagesAt(nil, msg)
	if err != nil {
		t.Fatalf("producing over %s: %v", l.name, err)
	}
	got := readFrom(t, conn, offset, 1, kafka.SeekAbsolute)
	sameMessage(t, "over "+l.name, got[0], msg)
}

// SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 on the SASL_PLAINTEXT and SASL_SSL listeners: metadata,
// produce and fetch after authenticating; a wrong password fails at once with SASLAuthenticationFailed
// and an error that does not show it.
func TestSASLDialer(t *testing.T) {
	c := requireRackCluster(t)
	if len(c.SASLBrokers) == 0 {
		t.Skip("no SASL listeners in the environment (KAFKA_SASL_BROKERS)")
	}
	listeners := []listener{{"SASL_PLAINTEXT", c.SASLBrokers, false}}
	if len(c.SASLTLSBrokers) > 0 && c.TLSCA != "" {
		listeners = append(listeners, listener{"SASL_SSL", c.SASLTLSBrokers, true})
	}
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	for _, l := range listeners {
		for _, u := range saslUsers(c) {
			t.Run(l.name+"/"+u.mechanism, func(t *testing.T) {
				if u.cred.User == "" || u.cred.Password == "" {
					t.Fatalf("no %s user in the environment", u.mechanism)
				}
				d := newDialer()
				if l.tls {
					d.TLS = testTLSConfig(t, c)
				}
				d.SASLMechanism = mechanism(t, u.mechanism, u.cred.User, u.cred.Password)
				checkListener(t, c, l, d, topic)

				// A wrong password: refused well within the dial timeout, with the Kafka error, and the
				// password (wrong or right) nowhere in the message.
				const wrong = "not-the-password-7f3a"
				d.SASLMechanism = mechanism(t, u.mechanism, u.cred.User, wrong)
				d.Timeout = itTimeout
				fast := time.Now().Add(5 * time.Second)
				conn, err := d.Dial("tcp", l.addrs[1])
				if err == nil {
					conn.Close()
					t.Fatalf("%s with a wrong password: authenticated", u.mechanism)
				}
				if time.Now().After(fast) {
					t.Errorf("%s with a wrong password: the error came after more than 5 s (dial timeout %v): %v", u.mechanism, d.Timeout, err)
				}
				if !errors.Is(err, kafka.SASLAuthenticationFailed) {
					t.Errorf("%s with a wrong password: %v, want an error matching SASLAuthenticationFailed", u.mechanism, err)
				}
				for _, secret := range []string{wrong, u.cred.Password} {
					if text := fmt.Sprintf("%v %+v %#v", err, err, err); strings.Contains(text, secret) {
						t.Errorf("%s with a wrong password: the error shows a password: %s", u.mechanism, text)
					}
				}
			})
		}
	}
}

// TLS: the SSL listener with the test CA serves metadata, produce and fetch; without the CA the
// certificate is refused.
func TestTLSDialer(t *testing.T) {
	c := requireRackCluster(t)
	if len(c.TLSBrokers) == 0 || c.TLSCA == "" {
		t.Skip("no TLS listeners in the environment (KAFKA_TLS_BROKERS, KAFKA_TLS_CA)")
	}
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	d := newDialer()
	d.TLS = testTLSConfig(t, c)
	checkListener(t, c, listener{"SSL", c.TLSBrokers, true}, d, topic)

	untrusted := newDialer()
	untrusted.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	conn, err := untrusted.Dial("tcp", c.TLSBrokers[0])
	if err == nil {
		conn.Close()
		t.Fatalf("TLS without the test CA: connected")
	}
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("TLS without the test CA: %v, want an unknown-authority error", err)
	}
}
