package scram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rackfetch/kafka-go/sasl"
	xdg "github.com/xdg-go/scram"
)

// broker is the server half of SCRAM from xdg-go/scram, holding credentials
// the way Kafka stores them (salted, 4096 iterations).
type broker struct {
	server *xdg.Server
}

func newBroker(t *testing.T, gen xdg.HashGeneratorFcn, username, password string) *broker {
	t.Helper()
	c, err := gen.NewClient(username, password, "")
	if err != nil {
		t.Fatal(err)
	}
	creds := c.GetStoredCredentials(xdg.KeyFactors{Salt: "kafka-test-salt", Iters: 4096})
	// The server looks users up by their SASLprep'd name, which for the
	// names in these tests is the name itself.
	srv, err := gen.NewServer(func(name string) (xdg.StoredCredentials, error) {
		if name != username {
			return xdg.StoredCredentials{}, errors.New("unknown user")
		}
		return creds, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &broker{server: srv}
}

// exchange runs a full authentication between mech and the broker, the way
// the Dialer does with SaslAuthenticate round trips.
func exchange(ctx context.Context, mech sasl.Mechanism, b *broker) (*xdg.ServerConversation, error) {
	sc := b.server.NewConversation()
	sess, msg, err := mech.Start(ctx)
	if err != nil {
		return sc, err
	}
	for i := 0; i < 5; i++ {
		challenge, serr := sc.Step(string(msg))
		if serr != nil && challenge == "" {
			return sc, fmt.Errorf("broker: %w", serr)
		}
		done, resp, err := sess.Next(ctx, []byte(challenge))
		if err != nil {
			return sc, err
		}
		if done {
			if len(resp) != 0 {
				return sc, fmt.Errorf("response %q after done", resp)
			}
			return sc, nil
		}
		msg = resp
	}
	return sc, errors.New("exchange did not finish")
}

func TestScramExchange(t *testing.T) {
	for _, tc := range []struct {
		algo Algorithm
		gen  xdg.HashGeneratorFcn
	}{
		{SHA256, xdg.SHA256},
		{SHA512, xdg.SHA512},
	} {
		t.Run(tc.algo.Name(), func(t *testing.T) {
			// ',' and '=' must be escaped in SCRAM messages.
			for _, user := range []string{"alice", "al=ice,admin", "ünïcødé"} {
				mech, err := Mechanism(tc.algo, user, "correct horse battery staple")
				if err != nil {
					t.Fatal(err)
				}
				if mech.Name() != tc.algo.Name() {
					t.Fatalf("Name() = %q", mech.Name())
				}
				b := newBroker(t, tc.gen, user, "correct horse battery staple")
				sc, err := exchange(context.Background(), mech, b)
				if err != nil {
					t.Fatalf("%s: %v", user, err)
				}
				if !sc.Done() || !sc.Valid() {
					t.Fatalf("%s: server conversation done=%v valid=%v", user, sc.Done(), sc.Valid())
				}
				if sc.Username() != user {
					t.Fatalf("server saw user %q, want %q", sc.Username(), user)
				}
			}
		})
	}
}

func TestScramNames(t *testing.T) {
	if SHA256.Name() != "SCRAM-SHA-256" || SHA512.Name() != "SCRAM-SHA-512" {
		t.Fatalf("names: %s, %s", SHA256.Name(), SHA512.Name())
	}
	if SHA256.Hash().Size() != 32 || SHA512.Hash().Size() != 64 {
		t.Fatal("wrong hash sizes")
	}
}

func TestScramWrongPassword(t *testing.T) {
	const password = "wrong-password-do-not-print"
	mech, err := Mechanism(SHA512, "alice", password)
	if err != nil {
		t.Fatal(err)
	}
	_, err = exchange(context.Background(), mech, newBroker(t, xdg.SHA512, "alice", "right-password"))
	if err == nil {
		t.Fatal("authentication with a wrong password succeeded")
	}
	if strings.Contains(err.Error(), password) {
		t.Fatalf("error leaks the password: %v", err)
	}
}

func TestScramMismatchedAlgorithm(t *testing.T) {
	// A server using SHA-256 cannot verify a SHA-512 client.
	mech, err := Mechanism(SHA512, "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exchange(context.Background(), mech, newBroker(t, xdg.SHA256, "alice", "pw")); err == nil {
		t.Fatal("mismatched algorithms authenticated")
	}
}

func TestScramRejectsForgedServer(t *testing.T) {
	mech, err := Mechanism(SHA256, "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	b := newBroker(t, xdg.SHA256, "alice", "pw")
	sc := b.server.NewConversation()
	sess, msg, err := mech.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first, err := sc.Step(string(msg))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sess.Next(context.Background(), []byte(first)); err != nil {
		t.Fatal(err)
	}
	// A server that does not know the password cannot produce the right
	// signature; the client must notice instead of reporting success.
	done, _, err := sess.Next(context.Background(), []byte("v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="))
	if err == nil || done {
		t.Fatalf("forged server signature accepted: done=%v err=%v", done, err)
	}
	if !strings.HasPrefix(err.Error(), "scram: ") {
		t.Fatalf("error %q lacks the package prefix", err)
	}
}

func TestScramServerError(t *testing.T) {
	mech, _ := Mechanism(SHA256, "alice", "pw")
	sess, _, err := mech.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sess.Next(context.Background(), []byte("garbage")); err == nil {
		t.Fatal("malformed server-first message accepted")
	}
}

func TestScramContextCanceled(t *testing.T) {
	mech, _ := Mechanism(SHA256, "alice", "pw")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := mech.Start(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a canceled context: %v", err)
	}
	sess, _, err := mech.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sess.Next(ctx, []byte("r=x,s=eA==,i=4096")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a canceled context: %v", err)
	}
}

func TestScramConcurrentSessions(t *testing.T) {
	mech, err := Mechanism(SHA256, "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	b := newBroker(t, xdg.SHA256, "alice", "pw")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := exchange(context.Background(), mech, b)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestScramInvalidCredentials(t *testing.T) {
	const secret = "pass\u0007word-secret"
	if _, err := Mechanism(nil, "alice", "pw"); err == nil {
		t.Error("nil algorithm accepted")
	}
	for _, tc := range []struct{ user, pass, field string }{
		{"alice", secret, "password"},
		{"alice", "emoji-secret-\U0001F600", "password"},
		{"ali\u0007ce-secret", "pw", "username"},
	} {
		m, err := Mechanism(SHA256, tc.user, tc.pass)
		if err == nil || m != nil {
			t.Fatalf("Mechanism(%q) = %v, %v; want an error", tc.field, m, err)
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("error %q does not name the %s", err, tc.field)
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "\\u") {
			t.Errorf("error leaks a credential: %q", err)
		}
	}
}

func TestScramNeverPrintsPassword(t *testing.T) {
	const password = "hunter2-do-not-print"
	mech, err := Mechanism(SHA512, "alice", password)
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := mech.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wrapper := struct{ Mech sasl.Mechanism }{mech}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%T %v"} {
		for _, arg := range []any{mech, wrapper, &wrapper, sess} {
			out := fmt.Sprintf(verb, arg)
			if strings.Contains(out, password) || strings.Contains(out, fmt.Sprintf("%x", password)) {
				t.Errorf("fmt %s of %T leaks the password: %s", verb, arg, out)
			}
		}
	}
	if got, want := fmt.Sprint(mech), `SCRAM-SHA-512{Username:"alice", Password:<redacted>}`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}
