package plain

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rackfetch/kafka-go/sasl"
)

func TestPlainExchange(t *testing.T) {
	ctx := context.Background()
	var mech sasl.Mechanism = Mechanism{Username: "alice", Password: "s3cret-pw"}
	if mech.Name() != "PLAIN" {
		t.Fatalf("Name() = %q", mech.Name())
	}
	sess, ir, err := mech.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// RFC 4616: [authzid] NUL authcid NUL passwd, with an empty authzid.
	if want := []byte("\x00alice\x00s3cret-pw"); !bytes.Equal(ir, want) {
		t.Fatalf("initial response = %q, want %q", ir, want)
	}
	done, resp, err := sess.Next(ctx, nil)
	if !done || resp != nil || err != nil {
		t.Fatalf("Next = %v, %q, %v; want true, nil, nil", done, resp, err)
	}
}

func TestPlainEmptyAndUnicode(t *testing.T) {
	_, ir, err := Mechanism{Username: "ünïcødé", Password: ""}.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "\x00ünïcødé\x00"; string(ir) != want {
		t.Fatalf("initial response = %q, want %q", ir, want)
	}
}

func TestPlainRejectsNUL(t *testing.T) {
	for _, m := range []Mechanism{
		{Username: "al\x00ice", Password: "pw-secret"},
		{Username: "alice", Password: "pw\x00secret"},
	} {
		sess, ir, err := m.Start(context.Background())
		if err == nil || sess != nil || ir != nil {
			t.Fatalf("Start(%v) = %v, %q, %v; want an error", m, sess, ir, err)
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "al\x00ice") {
			t.Fatalf("error leaks a credential: %q", err)
		}
	}
}

func TestPlainNeverPrintsPassword(t *testing.T) {
	const password = "hunter2-do-not-print"
	m := Mechanism{Username: "alice", Password: password}
	var iface sasl.Mechanism = m
	wrapper := struct {
		Mech sasl.Mechanism
		Val  Mechanism
	}{iface, m}

	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v", "%10.3v", "%-20s"} {
		for _, arg := range []any{m, &m, iface, wrapper, &wrapper} {
			out := fmt.Sprintf(verb, arg)
			if strings.Contains(out, password) || strings.Contains(out, fmt.Sprintf("%x", password)) {
				t.Errorf("fmt %s of %T leaks the password: %s", verb, arg, out)
			}
		}
	}
	if got, want := m.String(), `plain.Mechanism{Username:"alice", Password:<redacted>}`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
	if got := m.GoString(); got != m.String() {
		t.Errorf("GoString() = %s", got)
	}
	if got := (Mechanism{Username: "bob"}).String(); !strings.Contains(got, `Password:""`) {
		t.Errorf("an empty password should show as empty: %s", got)
	}
}
