package rackdetect

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// GCE reads the zone (europe-west1-b) from the Google Compute Engine
// metadata server (instance/zone, which answers
// projects/<number>/zones/<zone>). GCP zone names are the same in every
// project, so the name is what brokers in that zone use.
type GCE struct {
	// Endpoint is the metadata server's base URL. When it is empty, the
	// host (host or host:port) in the environment variable
	// GCE_METADATA_HOST is used, as Google's client libraries do, and
	// otherwise http://169.254.169.254, the address of
	// metadata.google.internal: no DNS lookup off GCE.
	Endpoint string
	// Timeout bounds the request (default DefaultTimeout).
	Timeout time.Duration
	// Client sends the request (default: no proxy, no redirects).
	Client *http.Client
}

// Name returns "gce".
func (GCE) Name() string { return "gce" }

// Zone returns the instance's zone.
func (s GCE) Zone(ctx context.Context) (string, error) {
	return named(s.Name())(s.zone(ctx))
}

// gceHostEnv is the variable Google's client libraries read to reach the
// metadata server at another address (an emulator, a proxy).
const gceHostEnv = "GCE_METADATA_HOST"

func (s GCE) endpoint() string {
	if s.Endpoint != "" {
		return s.Endpoint
	}
	if host := strings.TrimSpace(os.Getenv(gceHostEnv)); host != "" {
		return "http://" + host
	}
	return ""
}

func (s GCE) zone(ctx context.Context) (string, error) {
	ctx, cancel := withTimeout(ctx, s.Timeout)
	defer cancel()
	base := baseURL(s.endpoint())
	body, header, err := call(ctx, s.Client, http.MethodGet, base+"/computeMetadata/v1/instance/zone",
		map[string]string{"Metadata-Flavor": "Google"})
	if err != nil {
		return "", fmt.Errorf("reading the zone: %w", err)
	}
	// The metadata server marks its answers; anything else answering on
	// that address (another cloud's service) is not it.
	if header.Get("Metadata-Flavor") != "Google" {
		return "", fmt.Errorf("reading the zone: the answer is not from the GCE metadata server (no Metadata-Flavor: Google header)")
	}
	body = strings.TrimSpace(body)
	i := strings.LastIndex(body, "/zones/")
	if i < 0 {
		return "", fmt.Errorf("reading the zone: want projects/<n>/zones/<zone>, got %.64q", body)
	}
	zone, err := checkZone(body[i+len("/zones/"):])
	if err != nil {
		return "", fmt.Errorf("reading the zone: %w", err)
	}
	return zone, nil
}
