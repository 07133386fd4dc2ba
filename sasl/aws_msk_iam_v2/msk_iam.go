// Package aws_msk_iam_v2 implements the AWS_MSK_IAM SASL mechanism of Amazon
// MSK with aws-sdk-go-v2: the client proves its IAM identity by sending the
// query parameters of a SigV4 presigned "kafka-cluster:Connect" request for
// the broker it connects to.
//
// It is a module of its own so that programs that do not use MSK never
// depend on the AWS SDK. It keeps the API of
// github.com/segmentio/kafka-go/sasl/aws_msk_iam_v2.
package aws_msk_iam_v2

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	signer "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/rackfetch/kafka-go/sasl"
)

// The values of the MSK IAM authentication payload (see
// https://github.com/aws/aws-msk-iam-auth, "Details").
const (
	payloadVersion = "2020_10_22"
	connectAction  = "kafka-cluster:Connect"
	signingService = "kafka-cluster"
	// emptyPayloadHash is the hex SHA-256 of the empty body of the presigned
	// GET request.
	emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	defaultExpiry    = 5 * time.Minute
)

// defaultUserAgent is sent when Mechanism.UserAgent is empty.
var defaultUserAgent = "rackfetch-kafka-go/sasl/aws_msk_iam_v2/" + runtime.Version()

// Mechanism authenticates with AWS IAM credentials (mechanism name
// "AWS_MSK_IAM"). It is safe for concurrent use: each connection signs its
// own request.
type Mechanism struct {
	// Signer signs the request. Nil means a default SigV4 signer.
	Signer *signer.Signer
	// Credentials provides the AWS credentials, e.g. aws.Config.Credentials.
	// Required. It is asked once per connection, so wrap a provider that
	// fetches remotely in aws.NewCredentialsCache (aws.Config's already is).
	Credentials aws.CredentialsProvider
	// Region is the AWS region of the MSK cluster, e.g. "us-east-1". Required.
	Region string
	// SignTime is the time the request is signed for. The zero value means
	// the time of each authentication; a fixed time is for tests.
	SignTime time.Time
	// Expiry is how long the signed request stays valid (default 5 minutes).
	Expiry time.Duration
	// UserAgent is sent as the payload's user-agent (default
	// "rackfetch-kafka-go/sasl/aws_msk_iam_v2/<Go version>").
	UserAgent string
}

var (
	_ sasl.Mechanism    = (*Mechanism)(nil)
	_ sasl.StateMachine = (*Mechanism)(nil)
)

// NewMechanism returns a Mechanism that signs with cfg's credentials for
// cfg's region.
func NewMechanism(awsCfg aws.Config) *Mechanism {
	return &Mechanism{
		Signer:      signer.NewSigner(),
		Credentials: awsCfg.Credentials,
		Region:      awsCfg.Region,
	}
}

// Name returns "AWS_MSK_IAM".
func (m *Mechanism) Name() string { return "AWS_MSK_IAM" }

// Start signs a connect request for the broker the Dialer is connecting to
// (sasl.MetadataFromContext) and returns the JSON payload MSK expects as
// the initial response.
func (m *Mechanism) Start(ctx context.Context) (sess sasl.StateMachine, ir []byte, err error) {
	payload, err := m.payload(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("aws_msk_iam_v2: %w", err)
	}
	ir, err = json.Marshal(payload)
	if err != nil {
		return nil, nil, fmt.Errorf("aws_msk_iam_v2: encoding the payload: %w", err)
	}
	// The exchange has a single step, so the Mechanism is its own state
	// machine.
	return m, ir, nil
}

// Next completes the exchange: MSK answers the payload with an error when
// it rejects it, so reaching Next means success.
func (m *Mechanism) Next(ctx context.Context, challenge []byte) (bool, []byte, error) {
	return true, nil, nil
}

// payload builds the fields of the authentication payload: the presigned
// request's query parameters with lower-case names, plus the version, host,
// user agent and action.
func (m *Mechanism) payload(ctx context.Context) (map[string]string, error) {
	md := sasl.MetadataFromContext(ctx)
	if md == nil || md.Host == "" {
		return nil, errors.New("no broker host to sign for: the context carries no sasl.Metadata")
	}
	if m.Credentials == nil {
		return nil, errors.New("no credentials provider (Mechanism.Credentials is nil)")
	}
	if m.Region == "" {
		return nil, errors.New("no AWS region (Mechanism.Region is empty)")
	}
	expiry := m.Expiry
	if expiry == 0 {
		expiry = defaultExpiry
	}
	if expiry < time.Second {
		return nil, fmt.Errorf("expiry %v is under a second", expiry)
	}
	signTime := m.SignTime
	if signTime.IsZero() {
		signTime = time.Now()
	}

	creds, err := m.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("retrieving AWS credentials: %w", err)
	}
	if creds.Expired() {
		return nil, fmt.Errorf("the AWS credentials of %s expired at %s", creds.Source, creds.Expires.UTC().Format(time.RFC3339))
	}
	if !creds.HasKeys() {
		return nil, fmt.Errorf("the AWS credentials of %s have no access key id or secret", creds.Source)
	}

	host := md.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal
	}
	query := url.Values{
		"Action":        {connectAction},
		"X-Amz-Expires": {strconv.FormatInt(int64(expiry/time.Second), 10)},
	}
	u := url.URL{Scheme: "kafka", Host: host, Path: "/", RawQuery: query.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building the request to sign for %s: %w", net.JoinHostPort(md.Host, strconv.Itoa(md.Port)), err)
	}
	s := m.Signer
	if s == nil {
		s = signer.NewSigner()
	}
	signed, _, err := s.PresignHTTP(ctx, creds, req, emptyPayloadHash, signingService, m.Region, signTime)
	if err != nil {
		return nil, fmt.Errorf("signing the connect request: %w", err)
	}
	su, err := url.Parse(signed)
	if err != nil {
		return nil, fmt.Errorf("reading the signed request: %w", err)
	}

	userAgent := m.UserAgent
	if userAgent == "" {
		userAgent = defaultUserAgent
	}
	payload := map[string]string{
		"version":    payloadVersion,
		"host":       su.Host,
		"user-agent": userAgent,
	}
	// The query holds the action, expiry and the signer's X-Amz-* fields
	// (session token included when there is one); MSK wants the names in
	// lower case.
	for name, values := range su.Query() {
		payload[strings.ToLower(name)] = values[0]
	}
	return payload, nil
}
