package kafka

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// oldBroker answers ApiVersions as a broker that speaks it up to v2 does:
// a newer version gets UNSUPPORTED_VERSION in the v0 layout, naming the
// ApiVersions range (or, with named false, nothing). It returns the
// versions it was asked at.
func oldBroker(t *testing.T, c net.Conn, named bool, requests int) <-chan []int16 {
	asked := make(chan []int16, 1)
	go func() {
		defer c.Close()
		var versions []int16
		defer func() { asked <- versions }()
		for i := 0; i < requests; i++ {
			body, err := protocol.ReadFrame(c, nil, 1<<20)
			if !assert.NoError(t, err) {
				return
			}
			hdr, _, err := protocol.DecodeRequestHeader(body, func(protocol.ApiKey) int16 { return -1 })
			if !assert.NoError(t, err) || !assert.Equal(t, protocol.ApiVersions, hdr.Key) {
				return
			}
			versions = append(versions, hdr.Version)
			resp := &protocol.ApiVersionsResponse{ApiKeys: []protocol.ApiVersionsKey{
				{ApiKey: protocol.ApiVersions, MinVersion: 0, MaxVersion: 2},
				{ApiKey: protocol.Metadata, MinVersion: 0, MaxVersion: 8},
			}}
			v := hdr.Version
			if v > 2 {
				resp.ErrorCode = int16(UnsupportedVersion)
				if !named {
					resp.ApiKeys = nil
				}
				v = 0
			}
			if _, err := c.Write(protocol.AppendResponse(nil, resp, v, false, hdr.CorrelationID)); !assert.NoError(t, err) {
				return
			}
		}
	}()
	return asked
}

// TestApiVersionsFallsBackToTheBrokersVersion: a broker without ApiVersions
// v3 answers UNSUPPORTED_VERSION in the v0 layout. Reading that as v3
// failed with "message truncated"; the client now reads it as v0 and asks
// again at the version the broker names, or at v0 when it names none.
func TestApiVersionsFallsBackToTheBrokersVersion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		named bool
		want  []int16
	}{
		{"named range", true, []int16{3, 2}},
		{"no range", false, []int16{3, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			asked := oldBroker(t, server, tc.named, 2)
			conn := NewConn(client, "", 0)
			defer conn.Close()
			vs, err := conn.ApiVersions()
			require.NoError(t, err)
			assert.Contains(t, vs, ApiVersion{ApiKey: int16(protocol.Metadata), MinVersion: 0, MaxVersion: 8})
			assert.Equal(t, tc.want, <-asked)
		})
	}
}

// TestDialOldBrokerApiVersions dials a fake broker that speaks ApiVersions
// up to v2 only and reads partitions through the connection.
func TestDialOldBrokerApiVersions(t *testing.T) {
	cl := fakebroker.NewCluster(t, fakebroker.Config{})
	cl.CreateTopic("t", 2, 1)
	cl.Broker(1).SetMaxVersion(protocol.ApiVersions, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := (&Dialer{}).DialContext(ctx, "tcp", cl.Broker(1).Addr())
	require.NoError(t, err)
	defer conn.Close()
	parts, err := conn.ReadPartitions("t")
	require.NoError(t, err)
	assert.Len(t, parts, 2)
}
