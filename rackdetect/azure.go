package rackdetect

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Azure reads the VM's logical availability zone ("1", "2", "3") and its
// location (eastus) from the Azure Instance Metadata Service
// (compute/zone and compute/location) and returns <location>-<zone>
// (eastus-1): the spelling AKS gives the topology.kubernetes.io/zone node
// label, and so the broker.rack of Strimzi brokers on AKS.
//
// Logical zones are shuffled per subscription, like AWS zone names: zone 1
// of one subscription may be zone 2 of another. That is right for brokers
// in the same subscription. For brokers elsewhere, set PhysicalZones to the
// consumer subscription's mapping (availabilityZoneMappings of
// `az account list-locations`), and the physical zone (eastus-az2) is
// returned instead; IMDS itself does not say it.
type Azure struct {
	// Endpoint is the metadata service's base URL (default
	// http://169.254.169.254).
	Endpoint string
	// Timeout bounds both requests together (default DefaultTimeout).
	Timeout time.Duration
	// Client sends the requests (default: no proxy, no redirects).
	Client *http.Client
	// PhysicalZones maps a logical zone ("1") to the physical zone to
	// return ("eastus-az2"); a zone it lacks is an error.
	PhysicalZones map[string]string
}

// azureAPIVersion is an IMDS version that has compute/zone and
// compute/location (IMDS refuses requests without a version).
const azureAPIVersion = "2021-02-01"

// Name returns "azure".
func (Azure) Name() string { return "azure" }

// Zone returns <location>-<zone>, or the mapped physical zone.
func (s Azure) Zone(ctx context.Context) (string, error) {
	return named(s.Name())(s.zone(ctx))
}

func (s Azure) zone(ctx context.Context) (string, error) {
	ctx, cancel := withTimeout(ctx, s.Timeout)
	defer cancel()
	zone, err := s.get(ctx, "zone")
	if err != nil {
		return "", err
	}
	if s.PhysicalZones != nil {
		phys, ok := s.PhysicalZones[zone]
		if !ok {
			return "", fmt.Errorf("logical zone %q is not in PhysicalZones", zone)
		}
		return checkZone(phys)
	}
	location, err := s.get(ctx, "location")
	if err != nil {
		return "", err
	}
	return location + "-" + zone, nil
}

// get reads one compute field as text.
func (s Azure) get(ctx context.Context, field string) (string, error) {
	base := baseURL(s.Endpoint)
	url := base + "/metadata/instance/compute/" + field + "?api-version=" + azureAPIVersion + "&format=text"
	body, _, err := call(ctx, s.Client, http.MethodGet, url, map[string]string{"Metadata": "true"})
	if err != nil {
		return "", fmt.Errorf("reading compute/%s: %w", field, err)
	}
	v, err := checkZone(body)
	if err != nil {
		// An empty zone is a VM deployed outside availability zones.
		return "", fmt.Errorf("reading compute/%s: %w", field, err)
	}
	return v, nil
}
