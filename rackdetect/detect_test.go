package rackdetect

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A source that fails is followed by the next; the first zone wins.
func TestDetectInOrder(t *testing.T) {
	_, ec2 := fakeIMDSv2(t, "euw1-az2")
	gce := fakeGCE(t, "projects/1/zones/europe-west1-b", true)
	missing := Kubernetes{File: filepath.Join(t.TempDir(), "labels")}

	zone, err := Detect(testCtx(t), missing, EC2{Endpoint: ec2}, GCE{Endpoint: gce})
	require.NoError(t, err)
	assert.Equal(t, "euw1-az2", zone)

	zone, err = Detect(testCtx(t), missing, GCE{Endpoint: gce}, EC2{Endpoint: ec2})
	require.NoError(t, err)
	assert.Equal(t, "europe-west1-b", zone)
}

func TestDetectAllFail(t *testing.T) {
	notFound := fakeServer(t, http.NotFound).URL
	_, err := Detect(testCtx(t),
		Kubernetes{File: filepath.Join(t.TempDir(), "labels")},
		EC2{Endpoint: notFound}, GCE{Endpoint: notFound}, Azure{Endpoint: notFound})
	require.Error(t, err)
	var de *DetectError
	require.ErrorAs(t, err, &de)
	require.Len(t, de.Errs, 4)
	for i, name := range []string{"kubernetes", "ec2", "gce", "azure"} {
		var se *SourceError
		require.ErrorAs(t, de.Errs[i], &se)
		assert.Equal(t, name, se.Source)
		assert.Contains(t, err.Error(), name+": ")
	}
	var st *StatusError
	require.ErrorAs(t, err, &st)
	assert.Equal(t, http.StatusNotFound, st.Code)
}

func TestDetectNoSource(t *testing.T) {
	_, err := Detect(testCtx(t))
	require.EqualError(t, err, "rackdetect: no source given")
	_, err = Detect(testCtx(t), nil)
	require.Error(t, err)
}

// A cancelled context ends the search at the first source.
func TestDetectCancelled(t *testing.T) {
	_, ec2 := fakeIMDSv2(t, "euw1-az2")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Detect(ctx, GCE{Endpoint: fakeGCE(t, "projects/1/zones/x-1", true)}, EC2{Endpoint: ec2})
	var de *DetectError
	require.ErrorAs(t, err, &de)
	assert.Len(t, de.Errs, 1)
	assert.ErrorIs(t, err, context.Canceled)
}
