package rackdetect

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGCE answers like the GCE metadata server: requests need
// Metadata-Flavor: Google, answers carry it.
func fakeGCE(t *testing.T, body string, flavor bool) string {
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if r.URL.Path != "/computeMetadata/v1/instance/zone" {
			http.NotFound(w, r)
			return
		}
		if flavor {
			w.Header().Set("Metadata-Flavor", "Google")
		}
		w.Write([]byte(body))
	})
	return srv.URL
}

func TestGCEZone(t *testing.T) {
	zone, err := GCE{Endpoint: fakeGCE(t, "projects/123456789/zones/europe-west1-b", true)}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "europe-west1-b", zone)
}

func TestGCEErrors(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		want      string
	}{
		{"answer without the flavor header", fakeGCE(t, "projects/1/zones/europe-west1-b", false), "not from the GCE metadata server"},
		{"garbage body", fakeGCE(t, "<html>oops</html>", true), "want projects/<n>/zones/<zone>"},
		{"bad zone", fakeGCE(t, "projects/1/zones/a b", true), "not a zone"},
		{"empty zone", fakeGCE(t, "projects/1/zones/", true), "no zone"},
		{"404", fakeServer(t, http.NotFound).URL, "HTTP 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GCE{Endpoint: tc.url}.Zone(testCtx(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "rackdetect: gce: reading the zone")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestGCETimeout(t *testing.T) {
	srv := stallingServer(t)
	_, err := GCE{Endpoint: srv.URL, Timeout: 50 * time.Millisecond}.Zone(testCtx(t))
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}

// GCE_METADATA_HOST points the probe at another host when no Endpoint is
// set; an Endpoint wins over it.
func TestGCEMetadataHost(t *testing.T) {
	url := fakeGCE(t, "projects/1/zones/us-central1-f", true)
	t.Setenv(gceHostEnv, strings.TrimPrefix(url, "http://"))
	zone, err := GCE{}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "us-central1-f", zone)

	other := fakeGCE(t, "projects/1/zones/asia-east1-a", true)
	zone, err = GCE{Endpoint: other}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "asia-east1-a", zone)
}
