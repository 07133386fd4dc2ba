package rackdetect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// EC2 reads the availability zone ID (use1-az4) from the EC2 instance
// metadata service with IMDSv2: a PUT for a session token, then a GET of
// placement/availability-zone-id carrying it. IMDSv2 is what instances
// that disable IMDSv1 answer, and IMDSv1 answers it too.
//
// The ID, not the name (us-east-1a): names map to physical zones
// differently in each AWS account, so a name read in the consumer's account
// may be another zone in the brokers' account. The ID is the same in every
// account, and it is what Amazon MSK sets as broker.rack.
//
// In a container on EC2 the token's answer must cross one more network hop
// than the instance's default limit of 1 allows: without a hop limit of 2
// (HttpPutResponseHopLimit) the PUT times out. On EKS, where pods often
// cannot reach IMDS, read the topology.k8s.aws/zone-id node label instead
// (Kubernetes{Label: ZoneIDLabel}); it holds the same ID.
//
// Like the AWS SDKs, EC2 does not call IMDS when the environment variable
// AWS_EC2_METADATA_DISABLED is "true": it fails at once with ErrDisabled.
type EC2 struct {
	// Endpoint is the metadata service's base URL (default
	// http://169.254.169.254).
	Endpoint string
	// Timeout bounds both requests together (default DefaultTimeout).
	Timeout time.Duration
	// Client sends the requests (default: no proxy, no redirects).
	Client *http.Client
}

// Name returns "ec2".
func (EC2) Name() string { return "ec2" }

// Zone returns the instance's availability zone ID.
func (s EC2) Zone(ctx context.Context) (string, error) {
	return named(s.Name())(s.zone(ctx))
}

// ec2DisabledEnv is the AWS SDKs' switch that turns IMDS calls off.
const ec2DisabledEnv = "AWS_EC2_METADATA_DISABLED"

// ErrDisabled says that a source was switched off by its environment
// variable and asked nothing.
var ErrDisabled = errors.New("disabled")

func (s EC2) zone(ctx context.Context) (string, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(ec2DisabledEnv)), "true") {
		return "", fmt.Errorf("%w by %s=true", ErrDisabled, ec2DisabledEnv)
	}
	ctx, cancel := withTimeout(ctx, s.Timeout)
	defer cancel()
	base := baseURL(s.Endpoint)
	// The token only has to outlive the next request.
	token, _, err := call(ctx, s.Client, http.MethodPut, base+"/latest/api/token",
		map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60"})
	if err != nil {
		return "", fmt.Errorf("getting an IMDSv2 token: %w", err)
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", fmt.Errorf("getting an IMDSv2 token: empty token")
	}
	body, _, err := call(ctx, s.Client, http.MethodGet, base+"/latest/meta-data/placement/availability-zone-id",
		map[string]string{"X-aws-ec2-metadata-token": token})
	if err != nil {
		return "", fmt.Errorf("reading the availability zone ID: %w", err)
	}
	zone, err := checkZone(body)
	if err != nil {
		return "", fmt.Errorf("reading the availability zone ID: %w", err)
	}
	return zone, nil
}
