package oauthbearer

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func static(tok Token) TokenProvider {
	return TokenProviderFunc(func(context.Context) (Token, error) { return tok, nil })
}

func TestInitialResponse(t *testing.T) {
	m := Mechanism{TokenProvider: static(Token{Value: "eyJhbGciOi.eyJzdWIi.c2ln"})}
	assert.Equal(t, "OAUTHBEARER", m.Name())
	sess, ir, err := m.Start(context.Background())
	require.NoError(t, err)
	require.NotNil(t, sess)
	assert.Equal(t, "n,,\x01auth=Bearer eyJhbGciOi.eyJzdWIi.c2ln\x01\x01", string(ir))

	m.TokenProvider = static(Token{Value: "abc+/==", Extensions: map[string]string{"traceId": "t 1", "logicalCluster": "lkc-1"}})
	_, ir, err = m.Start(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "n,,\x01auth=Bearer abc+/==\x01logicalCluster=lkc-1\x01traceId=t 1\x01\x01", string(ir), "extensions sorted by key")
}

func TestStartRejectsWhatWouldBreakTheFraming(t *testing.T) {
	errIdP := errors.New("identity provider unreachable")
	for _, tc := range []struct {
		name string
		m    Mechanism
		want string
	}{
		{"no provider", Mechanism{}, "no TokenProvider"},
		{"provider fails", Mechanism{TokenProvider: TokenProviderFunc(func(context.Context) (Token, error) { return Token{}, errIdP })}, "getting a token"},
		{"empty token", Mechanism{TokenProvider: static(Token{})}, "not an RFC 6750 bearer token"},
		{"separator in token", Mechanism{TokenProvider: static(Token{Value: "se\x01cret"})}, "not an RFC 6750 bearer token"},
		{"= inside token", Mechanism{TokenProvider: static(Token{Value: "se=cret"})}, "not an RFC 6750 bearer token"},
		{"auth extension", Mechanism{TokenProvider: static(Token{Value: "t", Extensions: map[string]string{"auth": "x"}})}, `extension key "auth"`},
		{"digit in key", Mechanism{TokenProvider: static(Token{Value: "t", Extensions: map[string]string{"k1": "x"}})}, `extension key "k1"`},
		{"separator in value", Mechanism{TokenProvider: static(Token{Value: "t", Extensions: map[string]string{"k": "a\x01b"}})}, `extension "k"`},
		{"empty value", Mechanism{TokenProvider: static(Token{Value: "t", Extensions: map[string]string{"k": ""}})}, `extension "k"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess, ir, err := tc.m.Start(context.Background())
			require.ErrorContains(t, err, tc.want)
			assert.NotContains(t, err.Error(), "cret", "the token never shows in an error")
			assert.Nil(t, sess)
			assert.Nil(t, ir)
		})
	}
	_, _, err := Mechanism{TokenProvider: TokenProviderFunc(func(context.Context) (Token, error) { return Token{}, errIdP })}.Start(context.Background())
	require.ErrorIs(t, err, errIdP)
}

// An error challenge is answered with a lone 0x01 (RFC 7628 §3.2.3); a
// broker that then carries on instead of failing is an error too.
func TestNextAnswersErrorChallenge(t *testing.T) {
	sess, _, err := Mechanism{TokenProvider: static(Token{Value: "t"})}.Start(context.Background())
	require.NoError(t, err)
	done, resp, err := sess.Next(context.Background(), []byte(`{"status":"invalid_token"}`))
	require.NoError(t, err)
	assert.False(t, done)
	assert.Equal(t, []byte{0x01}, resp)
	done, _, err = sess.Next(context.Background(), nil)
	require.ErrorContains(t, err, `rejected the token ({"status":"invalid_token"})`)
	assert.False(t, done)

	sess, _, err = Mechanism{TokenProvider: static(Token{Value: "t"})}.Start(context.Background())
	require.NoError(t, err)
	done, resp, err = sess.Next(context.Background(), []byte{})
	require.NoError(t, err)
	assert.True(t, done)
	assert.Nil(t, resp)
}

func TestTokenPrintsWithoutValue(t *testing.T) {
	tok := Token{Value: "topsecret", Extensions: map[string]string{"k": "v"}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		s := fmt.Sprintf(verb, tok)
		assert.NotContains(t, s, "topsecret", verb)
		assert.Contains(t, s, "<redacted>", verb)
	}
}
