// Package scram implements the SASL SCRAM-SHA-256 and SCRAM-SHA-512
// mechanisms (RFC 5802, RFC 7677) on top of github.com/xdg-go/scram. The
// password never crosses the wire; the broker must have SCRAM credentials
// for the user (kafka-configs --alter --add-config 'SCRAM-SHA-512=[...]').
package scram

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"

	"github.com/rackfetch/kafka-go/sasl"
	"github.com/xdg-go/scram"
)

// Algorithm selects the hash function SCRAM uses.
type Algorithm interface {
	// Name returns the SASL mechanism name, e.g. "SCRAM-SHA-256".
	Name() string

	// Hash returns a new hash.Hash.
	Hash() hash.Hash
}

type sha256Algo struct{}

func (sha256Algo) Name() string    { return "SCRAM-SHA-256" }
func (sha256Algo) Hash() hash.Hash { return sha256.New() }

type sha512Algo struct{}

func (sha512Algo) Name() string    { return "SCRAM-SHA-512" }
func (sha512Algo) Hash() hash.Hash { return sha512.New() }

// The two algorithms Kafka supports.
var (
	SHA256 Algorithm = sha256Algo{}
	SHA512 Algorithm = sha512Algo{}
)

type mechanism struct {
	algo     Algorithm
	username string // kept only for String
	client   *scram.Client
}

type session struct {
	convo *scram.ClientConversation
}

var (
	_ sasl.Mechanism    = (*mechanism)(nil)
	_ sasl.StateMachine = (*session)(nil)
	_ fmt.Formatter     = (*mechanism)(nil)
)

// Mechanism returns a sasl.Mechanism that authenticates username with
// password using algo. The username and password are normalized with
// SASLprep as RFC 5802 requires; an error is returned if either cannot be.
// Errors and printed forms of the Mechanism never contain the password.
func Mechanism(algo Algorithm, username, password string) (sasl.Mechanism, error) {
	if algo == nil {
		return nil, errors.New("scram: no algorithm given")
	}
	gen := scram.HashGeneratorFcn(algo.Hash)
	client, err := gen.NewClient(username, password, "")
	if err != nil {
		// xdg-go/scram's message may quote the input; report only which
		// field was rejected. A stand-in password isolates the username.
		if _, uerr := gen.NewClient(username, "x", ""); uerr != nil {
			return nil, errors.New("scram: the username is not valid under SASLprep (RFC 4013)")
		}
		return nil, errors.New("scram: the password is not valid under SASLprep (RFC 4013)")
	}
	return &mechanism{algo: algo, username: username, client: client}, nil
}

func (m *mechanism) Name() string { return m.algo.Name() }

// Start sends the client-first message. Each call gets its own conversation,
// so one mechanism serves many connections at once.
func (m *mechanism) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	convo := m.client.NewConversation()
	msg, err := convo.Step("")
	if err != nil {
		return nil, nil, fmt.Errorf("scram: %w", err)
	}
	return &session{convo: convo}, []byte(msg), nil
}

// Next answers the server-first message with the client proof, then checks
// the server signature in the server-final message and reports done.
func (s *session) Next(ctx context.Context, challenge []byte) (bool, []byte, error) {
	if err := ctx.Err(); err != nil {
		return false, nil, err
	}
	msg, err := s.convo.Step(string(challenge))
	if err != nil {
		return false, nil, fmt.Errorf("scram: %w", err)
	}
	return s.convo.Done(), []byte(msg), nil
}

// String shows the algorithm and username and hides the password.
func (m *mechanism) String() string {
	return m.algo.Name() + "{Username:" + strconv.Quote(m.username) + ", Password:<redacted>}"
}

// GoString is String, so %#v hides the password too.
func (m *mechanism) GoString() string { return m.String() }

// Format makes every fmt verb print String.
func (m *mechanism) Format(f fmt.State, verb rune) {
	io.WriteString(f, m.String())
}
