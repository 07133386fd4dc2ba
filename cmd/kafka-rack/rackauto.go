package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/rackdetect"
)

// autoRack is the -rack value that asks rackdetect for the rack.
const autoRack = "auto"

// autoSources are what -rack auto asks, in order of preference: the AZ ID
// before the zone name, since on AWS both are at hand and the ID is what
// MSK uses (a variable: tests point the sources at fakes).
var autoSources = func() []rackdetect.Source {
	return []rackdetect.Source{
		rackdetect.Kubernetes{Label: rackdetect.ZoneIDLabel},
		rackdetect.EC2{},
		rackdetect.Kubernetes{},
		rackdetect.GCE{},
		rackdetect.Azure{},
	}
}

// resolveRack replaces -rack auto with the detected rack. KAFKA_CLIENT_RACK
// wins, as in rackdetect.Detect. Otherwise every source is asked at once
// and the first answer, in autoSources' order, that is some broker's rack
// is taken: only the brokers tell whether they spell zones by ID or by
// name. When no answer is a broker's rack, the first answer is taken, and
// the report warns that no broker is in it.
func resolveRack(ctx context.Context, cfg *config, stderr io.Writer) error {
	if cfg.Rack != autoRack {
		return nil
	}
	rack, from, err := detectRack(ctx, cfg)
	if err != nil {
		return fmt.Errorf("-rack auto: %w", err)
	}
	fmt.Fprintf(stderr, "kafka-rack: -rack auto: rack %q (%s)\n", rack, from)
	cfg.Rack, cfg.Racks = rack, []string{rack}
	return nil
}

func detectRack(ctx context.Context, cfg *config) (rack, from string, err error) {
	if v, ok := os.LookupEnv(rackdetect.OverrideEnv); ok && v != "" {
		rack, err := rackdetect.Detect(ctx) // validates the override
		return rack, "from " + rackdetect.OverrideEnv, err
	}
	sources := autoSources()
	zones := make([]string, len(sources))
	errs := make([]error, len(sources))
	var wg sync.WaitGroup
	for i, s := range sources {
		wg.Add(1)
		go func(i int, s rackdetect.Source) {
			defer wg.Done()
			zones[i], errs[i] = s.Zone(ctx)
		}(i, s)
	}
	wg.Wait()
	brokerRacks, err := brokerRacks(ctx, cfg)
	if err != nil {
		return "", "", err
	}
	first := -1
	for i, z := range zones {
		if errs[i] != nil {
			continue
		}
		if brokerRacks[z] {
			return z, fmt.Sprintf("from %s, a rack of the brokers", describeSource(sources[i])), nil
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return "", "", &rackdetect.DetectError{Errs: errs}
	}
	return zones[first], fmt.Sprintf("from %s; no broker has this rack", describeSource(sources[first])), nil
}

// describeSource names a source, and the label a Kubernetes source reads.
func describeSource(s rackdetect.Source) string {
	if k, ok := s.(rackdetect.Kubernetes); ok {
		label := k.Label
		if label == "" {
			label = rackdetect.ZoneLabel
		}
		return "kubernetes label " + label
	}
	return s.Name()
}

// brokerRacks returns the racks metadata gives the brokers (none when
// broker.rack is unset everywhere: the report then warns).
func brokerRacks(ctx context.Context, cfg *config) (map[string]bool, error) {
	cl, _ := cfg.client()
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: cfg.Topics})
	if err != nil {
		return nil, fmt.Errorf("reading the brokers' racks from %s: %w", strings.Join(cfg.Brokers, ","), err)
	}
	racks := map[string]bool{}
	for _, b := range md.Brokers {
		if b.Rack != "" {
			racks[b.Rack] = true
		}
	}
	return racks, nil
}
