package testing

// Integration tests of the harness itself: the cluster that testing/cluster/kafka-cluster starts is
// reachable on every listener, has the promised racks and users, and the chaos helpers do what they say.

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	stdtesting "testing"
	"time"
)

func requireThreeBrokers(t *stdtesting.T) *Cluster {
	t.Helper()
	c := RequireCluster(t)
	if len(c.BrokerIDs) != 3 || len(c.Racks) != 3 {
		t.Skipf("harness tests need the 3-rack cluster of kafka-cluster (KAFKA_BROKER_IDS=%v, KAFKA_RACKS=%v)", c.BrokerIDs, c.Racks)
	}
	return c
}

// checkMetadata asserts that the brokers in md are the cluster's, with their racks.
func checkMetadata(t *stdtesting.T, c *Cluster, from string, md map[int]brokerInfo) {
	t.Helper()
	if len(md) != len(c.BrokerIDs) {
		t.Errorf("Metadata from %s lists %d brokers %v, want %d", from, len(md), md, len(c.BrokerIDs))
	}
	for _, id := range c.BrokerIDs {
		b, ok := md[id]
		if !ok {
			t.Errorf("Metadata from %s lacks broker %d", from, id)
			continue
		}
		if b.Rack != c.Rack(id) {
			t.Errorf("Metadata from %s: broker %d in rack %q, want %q", from, id, b.Rack, c.Rack(id))
		}
	}
}

// waitFor polls cond every 200ms until it holds or timeout passes, and returns how long it took.
func waitFor(t *stdtesting.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return time.Since(start)
}

func TestClusterBrokersServeMetadata(t *stdtesting.T) {
	c := requireThreeBrokers(t)
	for i, addr := range c.Brokers {
		md, err := fetchMetadata(addr, nil, 10*time.Second)
		if err != nil {
			t.Fatalf("broker %d at %s: %v", c.BrokerIDs[i], addr, err)
		}
		checkMetadata(t, c, addr, md)
		// The advertised PLAINTEXT address of each broker is the one in KAFKA_BROKERS.
		for j, id := range c.BrokerIDs {
			if md[id].Addr != c.Brokers[j] {
				t.Errorf("broker %d advertises %s, KAFKA_BROKERS has %s", id, md[id].Addr, c.Brokers[j])
			}
		}
	}
}

func TestClusterTLSListeners(t *stdtesting.T) {
	c := requireThreeBrokers(t)
	if len(c.TLSBrokers) == 0 || c.TLSCA == "" {
		t.Skip("no TLS listeners in the environment (KAFKA_TLS_BROKERS, KAFKA_TLS_CA)")
	}
	cfg, err := tlsConfigFor(c.TLSCA)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range c.TLSBrokers {
		md, err := fetchMetadata(addr, cfg, 10*time.Second)
		if err != nil {
			t.Fatalf("TLS %s (verifying against %s): %v", addr, c.TLSCA, err)
		}
		checkMetadata(t, c, addr, md)
	}
	// Without the test CA the certificate is not trusted.
	if conn, err := dialWire(c.TLSBrokers[0], &tls.Config{MinVersion: tls.VersionTLS12}, 5*time.Second); err == nil {
		conn.Close()
		t.Errorf("TLS %s verified without the test CA", c.TLSBrokers[0])
	}
}

func TestClusterSASLListeners(t *stdtesting.T) {
	c := requireThreeBrokers(t)
	if len(c.SASLBrokers) == 0 {
		t.Skip("no SASL listeners in the environment (KAFKA_SASL_BROKERS)")
	}
	users := []struct {
		mechanism string
		cred      Credentials
	}{
		{"PLAIN", c.Plain},
		{"SCRAM-SHA-256", c.SCRAM256},
		{"SCRAM-SHA-512", c.SCRAM512},
	}
	type listener struct {
		name  string
		addrs []string
		tls   bool
	}
	listeners := []listener{{"SASL_PLAINTEXT", c.SASLBrokers, false}}
	if len(c.SASLTLSBrokers) > 0 && c.TLSCA != "" {
		listeners = append(listeners, listener{"SASL_SSL", c.SASLTLSBrokers, true})
	}
	for _, l := range listeners {
		for _, u := range users {
			t.Run(l.name+"/"+u.mechanism, func(t *stdtesting.T) {
				if u.cred.User == "" {
					t.Fatalf("no %s user in the environment", u.mechanism)
				}
				var cfg *tls.Config
				if l.tls {
					var err error
					if cfg, err = tlsConfigFor(c.TLSCA); err != nil {
						t.Fatal(err)
					}
				}
				for _, addr := range l.addrs {
					conn, err := dialWire(addr, cfg, 10*time.Second)
					if err != nil {
						t.Fatal(err)
					}
					if err := conn.saslLogin(u.mechanism, u.cred.User, u.cred.Password, 10*time.Second); err != nil {
						conn.Close()
						t.Fatalf("%s login as %s at %s: %v", u.mechanism, u.cred.User, addr, err)
					}
					md, err := conn.metadata(10 * time.Second)
					conn.Close()
					if err != nil {
						t.Fatalf("Metadata after login at %s: %v", addr, err)
					}
					checkMetadata(t, c, addr, md)
				}
				// A wrong password is refused (SASL_AUTHENTICATION_FAILED, 58).
				conn, err := dialWire(l.addrs[0], cfg, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				err = conn.saslLogin(u.mechanism, u.cred.User, u.cred.Password+"-wrong", 10*time.Second)
				var kerr *kafkaError
				if !errors.As(err, &kerr) || kerr.code != 58 {
					t.Fatalf("login with a wrong password: %v, want error 58", err)
				}
			})
		}
	}
}

// checkRefused fails the test unless nothing listens on addr.
func checkRefused(t *stdtesting.T, what, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		t.Errorf("%s, but %s still accepts connections", what, addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("%s: dial %s: %v, want connection refused", what, addr, err)
	}
}

func TestClusterKillAndRestartBroker(t *stdtesting.T) {
	c := requireThreeBrokers(t)
	const victim = 2
	addr, other := c.Addr(victim), c.Addr(1)
	if _, err := fetchMetadata(addr, nil, 10*time.Second); err != nil {
		t.Fatalf("broker %d before the kill: %v", victim, err)
	}

	KillBroker(t, victim)
	checkRefused(t, "broker 2 killed", addr)
	for _, a := range [][]string{c.SASLBrokers, c.TLSBrokers, c.SASLTLSBrokers} {
		if len(a) == 3 {
			checkRefused(t, "broker 2 killed", a[1])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// The survivors notice: broker 2 leaves their Metadata once the controller fences it (KRaft) or its
	// ZooKeeper session expires (2.x). The cluster is configured to take seconds, not half a minute.
	took := waitFor(t, 30*time.Second, "broker 2 dropped from Metadata", func() bool {
		md, err := fetchMetadata(other, nil, 5*time.Second)
		_, listed := md[victim]
		return err == nil && len(md) == 2 && !listed
	})
	t.Logf("broker %d left the survivors' Metadata %.1fs after SIGKILL", victim, took.Seconds())

	RestartBroker(t, victim)
	md, err := fetchMetadata(addr, nil, 10*time.Second)
	if err != nil {
		t.Fatalf("broker %d after restart: %v", victim, err)
	}
	checkMetadata(t, c, addr, md)
	waitFor(t, 30*time.Second, "broker 2 back in the survivors' Metadata", func() bool {
		md, err := fetchMetadata(other, nil, 5*time.Second)
		return err == nil && len(md) == 3
	})
}

func TestClusterPauseAndResumeBroker(t *stdtesting.T) {
	c := requireThreeBrokers(t)
	const victim = 3
	addr := c.Addr(victim)

	PauseBroker(t, victim)
	// A stopped process still has its listening socket: the kernel completes the connection, but no
	// request is answered.
	conn, err := dialWire(addr, nil, 5*time.Second)
	if err != nil {
		t.Fatalf("paused broker %d: dial: %v", victim, err)
	}
	_, err = conn.metadata(2 * time.Second)
	conn.Close()
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("paused broker %d answered Metadata (err %v), want a timeout", victim, err)
	}

	ResumeBroker(t, victim)
	waitFor(t, 60*time.Second, "resumed broker serves Metadata listing 3 brokers", func() bool {
		md, err := fetchMetadata(addr, nil, 5*time.Second)
		return err == nil && len(md) == 3
	})
}

// A broker paused long enough to be fenced answers, once resumed, from its old view, which still lists it,
// while the others leave it out until the controller takes it back. The chaos helpers' cleanup (start) must
// return only when every broker lists every broker, or the next test finds a broker missing.
func TestClusterStartAfterFencingPause(t *stdtesting.T) {
	c := requireThreeBrokers(t)
	const victim = 3
	tool := requireTool(t)
	PauseBroker(t, victim)
	took := waitFor(t, 60*time.Second, "paused broker 3 dropped from the others' Metadata", func() bool {
		md, err := fetchMetadata(c.Addr(1), nil, 5*time.Second)
		_, listed := md[victim]
		return err == nil && !listed
	})
	t.Logf("broker %d fenced %.1fs after the pause", victim, took.Seconds())
	ResumeBroker(t, victim)

	startBroker(t, tool, victim) // what PauseBroker's cleanup runs
	for _, id := range c.BrokerIDs {
		md, err := fetchMetadata(c.Addr(id), nil, 10*time.Second)
		if err != nil {
			t.Fatalf("broker %d: %v", id, err)
		}
		checkMetadata(t, c, c.Addr(id), md)
	}
}
