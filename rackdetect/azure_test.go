package rackdetect

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeAzure answers like Azure IMDS: requests need Metadata: true and an
// api-version.
func fakeAzure(t *testing.T, fields map[string]string) string {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata") != "true" || r.URL.Query().Get("api-version") == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		v, ok := fields[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(v))
	})
	return srv.URL
}

var azureVM = map[string]string{
	"/metadata/instance/compute/zone":     "2",
	"/metadata/instance/compute/location": "eastus",
}

func TestAzureZone(t *testing.T) {
	zone, err := Azure{Endpoint: fakeAzure(t, azureVM)}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "eastus-2", zone, "the AKS zone label's spelling")
}

func TestAzurePhysicalZone(t *testing.T) {
	s := Azure{Endpoint: fakeAzure(t, azureVM), PhysicalZones: map[string]string{"1": "eastus-az3", "2": "eastus-az1"}}
	zone, err := s.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "eastus-az1", zone)

	s.PhysicalZones = map[string]string{"1": "eastus-az3"}
	_, err = s.Zone(testCtx(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `logical zone "2" is not in PhysicalZones`)
}

func TestAzureErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
		is     error
	}{
		{"VM outside zones", map[string]string{"/metadata/instance/compute/zone": "", "/metadata/instance/compute/location": "eastus"}, "reading compute/zone: no zone", ErrNoZone},
		{"no location", map[string]string{"/metadata/instance/compute/zone": "1"}, "reading compute/location", nil},
		{"garbage", map[string]string{"/metadata/instance/compute/zone": `{"error":"bad"}`}, "not a zone", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Azure{Endpoint: fakeAzure(t, tc.fields)}.Zone(testCtx(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "rackdetect: azure: ")
			assert.Contains(t, err.Error(), tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}

func TestAzureTimeout(t *testing.T) {
	srv := stallingServer(t)
	_, err := Azure{Endpoint: srv.URL, Timeout: 50 * time.Millisecond}.Zone(testCtx(t))
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}
