// Package plain implements the SASL PLAIN mechanism (RFC 4616). It sends the
// password as is, so use it only over TLS.
package plain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rackfetch/kafka-go/sasl"
)

// Mechanism authenticates with a username and password.
//
// Printing a Mechanism with any fmt verb never shows the password.
type Mechanism struct {
	Username string
	Password string
}

var (
	_ sasl.Mechanism    = Mechanism{}
	_ sasl.StateMachine = Mechanism{}
	_ fmt.Formatter     = Mechanism{}
)

// Name returns "PLAIN".
func (Mechanism) Name() string { return "PLAIN" }

// Start returns the single PLAIN message: an empty authorization id, the
// username and the password, separated by NUL bytes.
func (m Mechanism) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	// A NUL inside a field would shift the field boundaries the broker sees.
	if strings.IndexByte(m.Username, 0) >= 0 {
		return nil, nil, errors.New("plain: the username contains a NUL byte")
	}
	if strings.IndexByte(m.Password, 0) >= 0 {
		return nil, nil, errors.New("plain: the password contains a NUL byte")
	}
	ir := make([]byte, 0, 2+len(m.Username)+len(m.Password))
	ir = append(ir, 0)
	ir = append(ir, m.Username...)
	ir = append(ir, 0)
	ir = append(ir, m.Password...)
	// PLAIN has no per-connection state, so the Mechanism is its own
	// state machine.
	return m, ir, nil
}

// Next completes the exchange: the broker answers the initial message with
// an error if it rejects the credentials, so reaching Next means success.
func (Mechanism) Next(ctx context.Context, challenge []byte) (bool, []byte, error) {
	return true, nil, nil
}

// String shows the username and hides the password.
func (m Mechanism) String() string {
	return "plain.Mechanism{Username:" + strconv.Quote(m.Username) + ", Password:" + redact(m.Password) + "}"
}

// GoString is String, so %#v hides the password too.
func (m Mechanism) GoString() string { return m.String() }

// Format makes every verb (%v, %+v, %#v, %s, %q, %x, %d, ...) print String,
// since fmt would otherwise print the raw fields for verbs that do not use
// String.
func (m Mechanism) Format(f fmt.State, verb rune) {
	io.WriteString(f, m.String())
}

func redact(password string) string {
	if password == "" {
		return `""`
	}
	return "<redacted>"
}
