package rackdetect

import (
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingServer counts the requests it gets and answers 404.
func countingServer(t *testing.T) (*atomic.Int32, string) {
	var n atomic.Int32
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.NotFound(w, r)
	})
	return &n, srv.URL
}

// The override wins over every source, which is then not asked.
func TestDetectOverride(t *testing.T) {
	t.Setenv(OverrideEnv, " use1-az6 ")
	asked, url := countingServer(t)
	zone, err := Detect(testCtx(t), Kubernetes{File: labelsFile(t, podLabels)}, EC2{Endpoint: url})
	require.NoError(t, err)
	assert.Equal(t, "use1-az6", zone)
	assert.Zero(t, asked.Load(), "sources asked despite the override")

	zone, err = Detect(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "use1-az6", zone, "no source needed")
}

// A bad override is an error, not a fall-through to the sources.
func TestDetectBadOverride(t *testing.T) {
	t.Setenv(OverrideEnv, "us-east-1a; rm -rf")
	_, err := Detect(testCtx(t), Kubernetes{File: labelsFile(t, podLabels)})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrBadOverride)
	assert.Contains(t, err.Error(), "environment variable KAFKA_CLIENT_RACK")
	assert.Contains(t, err.Error(), "not a zone")
}

// An empty override is as good as unset.
func TestDetectEmptyOverride(t *testing.T) {
	t.Setenv(OverrideEnv, "")
	zone, err := Detect(testCtx(t), Kubernetes{File: labelsFile(t, podLabels)})
	require.NoError(t, err)
	assert.Equal(t, "eu-west-1b", zone)
}

// As the downward API writes an EKS node's labels copied to a pod.
const eksPodLabels = `app="billing"
topology.k8s.aws/zone-id="use1-az1"
topology.kubernetes.io/region="us-east-1"
topology.kubernetes.io/zone="us-east-1a"
`

// On EKS, the order recommended for MSK gives the zone ID and the one for
// Strimzi the zone name, from the same pod.
func TestDetectEKSPlatforms(t *testing.T) {
	labels := labelsFile(t, eksPodLabels)
	_, imds := fakeIMDSv2(t, "use1-az1")

	msk, err := Detect(testCtx(t), Kubernetes{File: labels, Label: ZoneIDLabel}, EC2{Endpoint: imds})
	require.NoError(t, err)
	assert.Equal(t, "use1-az1", msk, "MSK's broker.rack is the AZ ID")

	noLabel := filepath.Join(t.TempDir(), "labels")
	msk, err = Detect(testCtx(t), Kubernetes{File: noLabel, Label: ZoneIDLabel}, EC2{Endpoint: imds})
	require.NoError(t, err)
	assert.Equal(t, "use1-az1", msk, "IMDS when the label is not exposed")

	strimzi, err := Detect(testCtx(t), Kubernetes{File: labels})
	require.NoError(t, err)
	assert.Equal(t, "us-east-1a", strimzi, "Strimzi copies the zone name label")
}

// GKE and AKS: the zone label, else the cloud's metadata service, spell
// zones alike.
func TestDetectGKEAndAKS(t *testing.T) {
	missing := Kubernetes{File: filepath.Join(t.TempDir(), "labels")}
	gke, err := Detect(testCtx(t), missing, GCE{Endpoint: fakeGCE(t, "projects/1/zones/europe-west1-b", true)})
	require.NoError(t, err)
	assert.Equal(t, "europe-west1-b", gke)

	aks, err := Detect(testCtx(t), missing, Azure{Endpoint: fakeAzure(t, azureVM)})
	require.NoError(t, err)
	assert.Equal(t, "eastus-2", aks)
}
