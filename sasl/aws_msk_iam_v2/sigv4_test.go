package aws_msk_iam_v2

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file computes SigV4 signatures from the algorithm's definition
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html),
// independently of the AWS SDK, so that tests can check what the SDK's
// signer produced for MSK.

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

func sha256Hex(data string) string {
	sum := sha256.Sum256([]byte(data))
	return hex.EncodeToString(sum[:])
}

// signingKey is the HMAC chain from the secret over the date, region,
// service and "aws4_request".
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

// uriEncode escapes everything but the unreserved characters of RFC 3986,
// as SigV4's canonical query string does.
func uriEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		default:
			b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
		}
	}
	return b.String()
}

// canonicalQuery sorts the encoded parameters by name.
func canonicalQuery(params map[string]string) string {
	pairs := make([]string, 0, len(params))
	for k, v := range params {
		pairs = append(pairs, uriEncode(k)+"="+uriEncode(v))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// sigv4Request is what a signature covers.
type sigv4Request struct {
	method, path string
	query        map[string]string
	headers      map[string]string // lower-case names; all of them signed
	payloadHash  string
	amzDate      string // yyyyMMdd'T'HHmmss'Z'
	region       string
	service      string
}

func (r sigv4Request) signature(secret string) string {
	names := make([]string, 0, len(r.headers))
	for name := range r.headers {
		names = append(names, name)
	}
	sort.Strings(names)
	var headers strings.Builder
	for _, name := range names {
		headers.WriteString(name + ":" + strings.TrimSpace(r.headers[name]) + "\n")
	}
	canonical := strings.Join([]string{
		r.method, r.path, canonicalQuery(r.query), headers.String(), strings.Join(names, ";"), r.payloadHash,
	}, "\n")
	date := r.amzDate[:8]
	scope := date + "/" + r.region + "/" + r.service + "/aws4_request"
	toSign := strings.Join([]string{"AWS4-HMAC-SHA256", r.amzDate, scope, sha256Hex(canonical)}, "\n")
	return hex.EncodeToString(hmacSHA256(signingKey(secret, date, r.region, r.service), toSign))
}

// The helper reproduces AWS's published examples, so the MSK tests check
// the SDK against the algorithm and not against themselves.
func TestSigV4HelperMatchesAWSExamples(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	// The documented example signing key (IAM, us-east-1, 2015-08-30).
	require.Equal(t, "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9",
		hex.EncodeToString(signingKey(secret, "20150830", "us-east-1", "iam")))

	// The "get-vanilla" case of the SigV4 test suite.
	req := sigv4Request{
		method: "GET", path: "/", query: map[string]string{},
		headers:     map[string]string{"host": "example.amazonaws.com", "x-amz-date": "20150830T123600Z"},
		payloadHash: sha256Hex(""), amzDate: "20150830T123600Z", region: "us-east-1", service: "service",
	}
	require.Equal(t, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31", req.signature(secret))
}
