package rackdetect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func labelsFile(t *testing.T, content string) string {
	name := filepath.Join(t.TempDir(), "labels")
	require.NoError(t, os.WriteFile(name, []byte(content), 0o644))
	return name
}

// As the downward API writes a pod's labels: key="value", one a line.
const podLabels = `app="billing"
pod-template-hash="6d4cf56db6"
topology.kubernetes.io/region="eu-west-1"
topology.kubernetes.io/zone="eu-west-1b"
`

func TestKubernetesLabelsFile(t *testing.T) {
	zone, err := Kubernetes{File: labelsFile(t, podLabels)}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "eu-west-1b", zone)

	zone, err = Kubernetes{File: labelsFile(t, podLabels), Label: "topology.kubernetes.io/region"}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "eu-west-1", zone)
}

func TestKubernetesEnv(t *testing.T) {
	t.Setenv("TEST_RACKDETECT_ZONE", "use1-az4")
	zone, err := Kubernetes{Env: "TEST_RACKDETECT_ZONE"}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "use1-az4", zone)
}

// An unset variable falls back to the file, and the error names both.
func TestKubernetesEnvThenFile(t *testing.T) {
	t.Setenv("TEST_RACKDETECT_ZONE", "")
	zone, err := Kubernetes{Env: "TEST_RACKDETECT_ZONE", File: labelsFile(t, podLabels)}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "eu-west-1b", zone)

	missing := filepath.Join(t.TempDir(), "nope")
	_, err = Kubernetes{Env: "TEST_RACKDETECT_ZONE", File: missing}.Zone(testCtx(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "environment variable TEST_RACKDETECT_ZONE: no zone")
	assert.Contains(t, err.Error(), missing)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorIs(t, err, ErrNoZone)
}

func TestKubernetesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"no zone label", "app=\"billing\"\n", "label topology.kubernetes.io/zone in"},
		{"bad quoting", "topology.kubernetes.io/zone=\"eu-west-1b\n", "bad quoting"},
		{"garbage value", "topology.kubernetes.io/zone=\"eu west\"\n", "not a zone"},
		{"binary file", "\x00\x01\x02=\xff\xfe", "no zone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Kubernetes{File: labelsFile(t, tc.content)}.Zone(testCtx(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "rackdetect: kubernetes: ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestKubernetesDefaultFile(t *testing.T) {
	assert.Equal(t, "/etc/podinfo/labels", DefaultLabelsFile)
	if _, err := os.Stat(DefaultLabelsFile); err == nil {
		t.Logf("%s exists here; not asserting its absence", DefaultLabelsFile)
		return
	}
	_, err := Kubernetes{}.Zone(testCtx(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), DefaultLabelsFile)
}

// ZoneIDLabel reads EKS's AZ ID label from the same labels file.
func TestKubernetesZoneIDLabel(t *testing.T) {
	assert.Equal(t, "topology.k8s.aws/zone-id", ZoneIDLabel)
	zone, err := Kubernetes{File: labelsFile(t, eksPodLabels), Label: ZoneIDLabel}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "use1-az1", zone)

	_, err = Kubernetes{File: labelsFile(t, podLabels), Label: ZoneIDLabel}.Zone(testCtx(t))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNoZone)
	assert.Contains(t, err.Error(), "label topology.k8s.aws/zone-id in")
}
