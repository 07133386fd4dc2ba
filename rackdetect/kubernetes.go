package rackdetect

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// DefaultLabelsFile is where the Kubernetes documentation mounts a pod's
// labels with the downward API.
const DefaultLabelsFile = "/etc/podinfo/labels"

// ZoneLabel is the well-known zone label of Kubernetes nodes. Clouds fill
// it with the zone name: us-east-1a on EKS, europe-west1-b on GKE, eastus-1
// on AKS. Strimzi copies it into broker.rack (rack.topologyKey).
const ZoneLabel = "topology.kubernetes.io/zone"

// ZoneIDLabel is the label EKS puts on nodes with the availability zone ID
// (use1-az4): the spelling of MSK's broker.rack.
const ZoneIDLabel = "topology.k8s.aws/zone-id"

// Kubernetes reads the pod's zone label, exposed by the downward API as an
// environment variable (env: valueFrom: fieldRef:
// metadata.labels['topology.kubernetes.io/zone']) or as a labels file
// (a downwardAPI volume item with fieldPath metadata.labels: one
// key="value" line per label).
//
// The zone is a node label; a pod carries it only when something copies
// it there: the PodTopologyLabelsAdmission feature of Kubernetes 1.33+
// copies ZoneLabel (and the region), a webhook or controller any other
// label. Which label to read depends on the brokers, not the cluster: on
// EKS, ZoneLabel holds the zone name (us-east-1a), which is what Strimzi
// brokers on the same cluster use, while MSK's broker.rack is the zone ID,
// held by ZoneIDLabel (set Label to it; PodTopologyLabelsAdmission does
// not copy it) or read from EC2.
type Kubernetes struct {
	// Env, when set, is the environment variable read first.
	Env string
	// File is the labels file (default DefaultLabelsFile when Env is unset).
	File string
	// Label is the label to read (default ZoneLabel).
	Label string
}

// Name returns "kubernetes".
func (Kubernetes) Name() string { return "kubernetes" }

// Zone returns the label's value.
func (s Kubernetes) Zone(ctx context.Context) (string, error) {
	return named(s.Name())(s.zone())
}

func (s Kubernetes) zone() (string, error) {
	file := s.File
	if file == "" && s.Env == "" {
		file = DefaultLabelsFile
	}
	var errs []error
	if s.Env != "" {
		zone, err := checkZone(os.Getenv(s.Env))
		if err == nil {
			return zone, nil
		}
		errs = append(errs, fmt.Errorf("environment variable %s: %w", s.Env, err))
	}
	if file != "" {
		zone, err := s.fromFile(file)
		if err == nil {
			return zone, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return "", errs[0]
	}
	return "", fmt.Errorf("%w; %w", errs[0], errs[1])
}

func (s Kubernetes) fromFile(name string) (string, error) {
	label := s.Label
	if label == "" {
		label = ZoneLabel
	}
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("reading labels: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(key) != label {
			continue
		}
		value = strings.TrimSpace(value)
		// The downward API quotes values like Go's %q.
		if strings.HasPrefix(value, `"`) {
			if value, err = strconv.Unquote(value); err != nil {
				return "", fmt.Errorf("label %s in %s: bad quoting: %w", label, name, err)
			}
		}
		zone, err := checkZone(value)
		if err != nil {
			return "", fmt.Errorf("label %s in %s: %w", label, name, err)
		}
		return zone, nil
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading labels from %s: %w", name, err)
	}
	return "", fmt.Errorf("label %s in %s: %w", label, name, ErrNoZone)
}
