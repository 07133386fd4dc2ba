package main

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/rackdetect"
)

// fakeZone is a rackdetect source that answers zone, or fails.
type fakeZone struct {
	name, zone string
}

func (f fakeZone) Name() string { return f.name }

func (f fakeZone) Zone(context.Context) (string, error) {
	if f.zone == "" {
		return "", &rackdetect.SourceError{Source: f.name, Err: rackdetect.ErrNoZone}
	}
	return f.zone, nil
}

func withAutoSources(t *testing.T, sources ...rackdetect.Source) {
	old := autoSources
	autoSources = func() []rackdetect.Source { return sources }
	t.Cleanup(func() { autoSources = old })
}

// -rack auto takes the first detected zone that is a broker's rack: here
// the second source's, as on EKS with a zone ID label (x) the brokers do
// not use and a zone name label (b) they do.
func TestKafkaRackAuto(t *testing.T) {
	t.Setenv(rackdetect.OverrideEnv, "")
	withAutoSources(t, fakeZone{"none", ""}, fakeZone{"id", "x"}, fakeZone{"name", "b"})
	code, out, errOut := runFake(t, fakeRacks(t, true), "-topic", "t", "-rack", "auto")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Contains(t, errOut, `-rack auto: rack "b" (from name, a rack of the brokers)`)
	assert.Contains(t, out, `client rack "b"`)
}

// With no answer a broker has, the first answer is taken, and the report
// says no broker is in it.
func TestKafkaRackAutoNoMatch(t *testing.T) {
	t.Setenv(rackdetect.OverrideEnv, "")
	withAutoSources(t, fakeZone{"id", "x"}, fakeZone{"name", "y"})
	code, out, errOut := runFake(t, fakeRacks(t, true), "-topic", "t", "-rack", "auto")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Contains(t, errOut, `rack "x" (from id; no broker has this rack)`)
	assert.Contains(t, out, `no broker is in rack "x"`)
}

// KAFKA_CLIENT_RACK wins; a bad one fails; no zone anywhere fails.
func TestKafkaRackAutoOverride(t *testing.T) {
	withAutoSources(t, fakeZone{"name", "b"})
	t.Setenv(rackdetect.OverrideEnv, "c")
	code, out, errOut := runFake(t, fakeRacks(t, true), "-topic", "t", "-rack", "auto")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Contains(t, errOut, `rack "c" (from KAFKA_CLIENT_RACK)`)
	assert.Contains(t, out, `client rack "c"`)

	t.Setenv(rackdetect.OverrideEnv, "c d")
	code, _, errOut = runFake(t, fakeRacks(t, true), "-topic", "t", "-rack", "auto")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "-rack auto: rackdetect: environment variable KAFKA_CLIENT_RACK: bad KAFKA_CLIENT_RACK")

	t.Setenv(rackdetect.OverrideEnv, "")
	withAutoSources(t, fakeZone{"id", ""}, fakeZone{"name", ""})
	code, _, errOut = runFake(t, fakeRacks(t, true), "-topic", "t", "-rack", "auto")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "-rack auto: rackdetect: no zone found: id: no zone; name: no zone")
}

// The sources -rack auto asks by default put the AZ ID before the zone
// name, and read the pod's labels where the downward API puts them.
func TestKafkaRackAutoSourcesOrder(t *testing.T) {
	var names []string
	for _, s := range autoSources() {
		names = append(names, describeSource(s))
	}
	assert.Equal(t, []string{"kubernetes label topology.k8s.aws/zone-id", "ec2", "kubernetes label topology.kubernetes.io/zone", "gce", "azure"}, names)
}

// -racks auto is refused: detection finds one rack.
func TestKafkaRackAutoFleetRefused(t *testing.T) {
	_, err := parseFlags([]string{"-brokers", "h:9092", "-topic", "t", "-racks", "a,auto"}, os.Stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-racks auto")
}
