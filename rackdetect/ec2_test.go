package rackdetect

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeIMDSv2 behaves like the EC2 metadata service with IMDSv1 disabled:
// a GET without a valid token is refused with 401.
func fakeIMDSv2(t *testing.T, zoneID string) (*atomic.Int32, string) {
	var unauthorized atomic.Int32
	const token = "tok-123"
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/latest/api/token":
			if r.Method != http.MethodPut || r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds") == "" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.Write([]byte(token))
		case r.Header.Get("X-aws-ec2-metadata-token") != token:
			unauthorized.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
		case r.Method == http.MethodGet && r.URL.Path == "/latest/meta-data/placement/availability-zone-id":
			w.Write([]byte(zoneID))
		case r.Method == http.MethodGet && r.URL.Path == "/latest/meta-data/placement/availability-zone":
			w.Write([]byte("us-east-1a"))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	return &unauthorized, srv.URL
}

func TestEC2ReadsZoneIDWithToken(t *testing.T) {
	unauthorized, url := fakeIMDSv2(t, "use1-az4")
	zone, err := EC2{Endpoint: url}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "use1-az4", zone, "the zone ID, not the name")
	assert.Zero(t, unauthorized.Load(), "requests sent without the token")
}

// The fake refuses a tokenless GET: shown directly, so that the test above
// proves the client sent the token.
func TestEC2FakeRefusesGetWithoutToken(t *testing.T) {
	unauthorized, url := fakeIMDSv2(t, "use1-az4")
	resp, err := http.Get(url + "/latest/meta-data/placement/availability-zone-id")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, int32(1), unauthorized.Load())
}

func TestEC2Errors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    []string
		status  int
	}{
		{
			name: "token refused (IMDS off)",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusForbidden)
			},
			want: []string{"ec2", "getting an IMDSv2 token", "PUT", "403"}, status: 403,
		},
		{
			name: "token not accepted",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut {
					w.Write([]byte("tok"))
					return
				}
				w.WriteHeader(http.StatusUnauthorized)
			},
			want: []string{"reading the availability zone ID", "401"}, status: 401,
		},
		{
			name: "no zone ID (404)",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut {
					w.Write([]byte("tok"))
					return
				}
				http.NotFound(w, r)
			},
			want: []string{"availability-zone-id", "404"}, status: 404,
		},
		{
			name: "empty token",
			handler: func(w http.ResponseWriter, r *http.Request) {
			},
			want: []string{"empty token"},
		},
		{
			name: "garbage body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut {
					w.Write([]byte("tok"))
					return
				}
				w.Write([]byte("<html><body>Sign in to the Wi-Fi</body></html>"))
			},
			want: []string{"not a zone", "<html>"},
		},
		{
			name: "body too long",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut {
					w.Write([]byte("tok"))
					return
				}
				w.Write([]byte(strings.Repeat("a", 10000)))
			},
			want: []string{"longer than 4096 bytes"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeServer(t, tc.handler)
			_, err := EC2{Endpoint: srv.URL}.Zone(testCtx(t))
			require.Error(t, err)
			var se *SourceError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "ec2", se.Source)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			if tc.status != 0 {
				var st *StatusError
				require.ErrorAs(t, err, &st)
				assert.Equal(t, tc.status, st.Code)
			}
		})
	}
}

func TestEC2Timeout(t *testing.T) {
	srv := stallingServer(t)
	_, err := EC2{Endpoint: srv.URL, Timeout: 50 * time.Millisecond}.Zone(testCtx(t))
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Contains(t, err.Error(), "rackdetect: ec2: getting an IMDSv2 token")
}

func TestEC2Unreachable(t *testing.T) {
	srv := fakeServer(t, func(http.ResponseWriter, *http.Request) {})
	url := srv.URL
	srv.Close()
	_, err := EC2{Endpoint: url}.Zone(testCtx(t))
	var opErr *net.OpError
	require.ErrorAs(t, err, &opErr, "%v", err)
	assert.Equal(t, "dial", opErr.Op)
}

// AWS_EC2_METADATA_DISABLED=true keeps EC2 from calling IMDS, as in the AWS
// SDKs; other values do not.
func TestEC2MetadataDisabled(t *testing.T) {
	asked, url := countingServer(t)
	for _, v := range []string{"true", "TRUE", " True "} {
		t.Setenv(ec2DisabledEnv, v)
		_, err := EC2{Endpoint: url}.Zone(testCtx(t))
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrDisabled)
		assert.Contains(t, err.Error(), "rackdetect: ec2: disabled by AWS_EC2_METADATA_DISABLED=true")
	}
	assert.Zero(t, asked.Load(), "IMDS asked while disabled")

	t.Setenv(ec2DisabledEnv, "false")
	_, imds := fakeIMDSv2(t, "use1-az4")
	zone, err := EC2{Endpoint: imds}.Zone(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, "use1-az4", zone)
}
