package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/rackdetect"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestZoneClientID(t *testing.T) {
	for _, tc := range []struct {
		backend        kafka.ZoneBackend
		clientID, zone string
		want           string
		wantErr        string // a part of the error, "" for none
		wantHasZone    bool   // the error wraps ErrClientIDHasZone
	}{
		// Each backend's key and separator.
		{backend: kafka.ZoneWarpStream, clientID: "myapp", zone: "us-east-1a", want: "myapp,ws_az=us-east-1a"},
		{backend: kafka.ZoneInkless, clientID: "myapp", zone: "use1-az1", want: "myapp,diskless_az=use1-az1"},
		{backend: kafka.ZoneBufstream, clientID: "myapp", zone: "us-west-2b", want: "myapp,zone=us-west-2b"},

		// An empty client id gives the pair alone.
		{backend: kafka.ZoneWarpStream, zone: "us-east-1a", want: "ws_az=us-east-1a"},
		{backend: kafka.ZoneInkless, zone: "az1", want: "diskless_az=az1"},
		{backend: kafka.ZoneBufstream, zone: "us-west-2b", want: "zone=us-west-2b"},

		// Other pairs of the backend are kept; a trailing separator is not doubled.
		{backend: kafka.ZoneWarpStream, clientID: "myapp,ws_host_override=lb.example.com", zone: "us-east-1a", want: "myapp,ws_host_override=lb.example.com,ws_az=us-east-1a"},
		{backend: kafka.ZoneWarpStream, clientID: "myapp,", zone: "us-east-1a", want: "myapp,ws_az=us-east-1a"},
		{backend: kafka.ZoneBufstream, clientID: "myapp;host_override=local.dev", zone: "us-west-2b", want: "myapp;host_override=local.dev;zone=us-west-2b"},
		{backend: kafka.ZoneBufstream, clientID: "myapp;", zone: "us-west-2b", want: "myapp;zone=us-west-2b"},
		{backend: kafka.ZoneBufstream, clientID: "myapp,label.zone=blue", zone: "us-west-2b", want: "myapp,label.zone=blue,zone=us-west-2b"},
		{backend: kafka.ZoneInkless, clientID: "my app", zone: "az1", want: "my app,diskless_az=az1"},

		// Another backend's key is not this backend's zone.
		{backend: kafka.ZoneBufstream, clientID: "myapp,ws_az=us-east-1a", zone: "us-east-1a", want: "myapp,ws_az=us-east-1a,zone=us-east-1a"},
		{backend: kafka.ZoneWarpStream, clientID: "myapp,diskless_az=az1", zone: "us-east-1a", want: "myapp,diskless_az=az1,ws_az=us-east-1a"},

		// Zones of every cloud, passed on as given.
		{backend: kafka.ZoneInkless, clientID: "a", zone: "europe-west1-b", want: "a,diskless_az=europe-west1-b"},
		{backend: kafka.ZoneInkless, clientID: "a", zone: "eastus-1", want: "a,diskless_az=eastus-1"},
		{backend: kafka.ZoneInkless, clientID: "a", zone: "1", want: "a,diskless_az=1"},
		{backend: kafka.ZoneInkless, clientID: "a", zone: "Rack_2.DC1", want: "a,diskless_az=Rack_2.DC1"},
		{backend: kafka.ZoneInkless, clientID: "a", zone: strings.Repeat("z", 64), want: "a,diskless_az=" + strings.Repeat("z", 64)},

		// A zone that is not one.
		{backend: kafka.ZoneWarpStream, clientID: "a", zone: "", wantErr: "empty zone"},
		{backend: kafka.ZoneWarpStream, clientID: "a", zone: "us east-1a", wantErr: `zone "us east-1a" has ' ' at byte 2`},
		{backend: kafka.ZoneWarpStream, clientID: "a", zone: " us-east-1a", wantErr: `has ' ' at byte 0`},
		{backend: kafka.ZoneWarpStream, clientID: "a", zone: "us-east-1a,x=y", wantErr: `has ',' at byte 10`},
		{backend: kafka.ZoneBufstream, clientID: "a", zone: "a;b", wantErr: `has ';' at byte 1`},
		{backend: kafka.ZoneInkless, clientID: "a", zone: "az=1", wantErr: `has '=' at byte 2`},
		{backend: kafka.ZoneInkless, clientID: "a", zone: "az1\n", wantErr: `has '\n' at byte 3`},
		{backend: kafka.ZoneInkless, clientID: "a", zone: "az\x001", wantErr: `has '\x00' at byte 2`},
		{backend: kafka.ZoneInkless, clientID: "a", zone: "zoné", wantErr: `has 'é' at byte 3`},
		{backend: kafka.ZoneInkless, clientID: "a", zone: strings.Repeat("z", 65), wantErr: "is 65 bytes, more than 64"},

		// A backend that is not one.
		{backend: "", clientID: "a", zone: "az1", wantErr: `unknown backend ""`},
		{backend: "WarpStream", clientID: "a", zone: "az1", wantErr: `unknown backend "WarpStream" (want "warpstream", "inkless" or "bufstream")`},

		// A client id that already names a zone.
		{backend: kafka.ZoneWarpStream, clientID: "myapp,ws_az=us-east-1b", zone: "us-east-1a", wantErr: "already sets ws_az", wantHasZone: true},
		{backend: kafka.ZoneWarpStream, clientID: "ws_az=us-east-1b,myapp", zone: "us-east-1a", wantErr: "already sets ws_az", wantHasZone: true},
		{backend: kafka.ZoneWarpStream, clientID: "warpstream_az=us-east-1b,myapp", zone: "us-east-1a", wantErr: "already sets warpstream_az", wantHasZone: true},
		{backend: kafka.ZoneInkless, clientID: "myapp diskless_az=az2", zone: "az1", wantErr: "already sets diskless_az", wantHasZone: true},
		{backend: kafka.ZoneInkless, clientID: "diskless_az=", zone: "az1", wantErr: "already sets diskless_az", wantHasZone: true},
		{backend: kafka.ZoneBufstream, clientID: "myapp;zone=us-west-2a", zone: "us-west-2b", wantErr: "already sets zone", wantHasZone: true},

		// A Bufstream client id mixing separators.
		{backend: kafka.ZoneBufstream, clientID: "myapp,a=b;c=d", zone: "us-west-2b", wantErr: "both ',' and ';'"},
	} {
		tc := tc
		t.Run(fmt.Sprintf("%s/%q/%q", tc.backend, tc.clientID, tc.zone), func(t *testing.T) {
			got, err := kafka.ZoneClientID(tc.backend, tc.clientID, tc.zone)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			require.Error(t, err)
			assert.Empty(t, got)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.True(t, strings.HasPrefix(err.Error(), "kafka: ZoneClientID: "), "error %q names its function", err)
			assert.Equal(t, tc.wantHasZone, errors.Is(err, kafka.ErrClientIDHasZone), "errors.Is(%v, ErrClientIDHasZone)", err)
		})
	}
}

// Whatever rackdetect accepts as a zone, ZoneClientID accepts too, so that
// a detected zone never fails here.
func TestZoneClientIDTakesDetectedZones(t *testing.T) {
	for _, zone := range []string{"use1-az4", "us-east-1a", "europe-west1-b", "eastus-1", "1", "Zone_A.1"} {
		t.Setenv(rackdetect.OverrideEnv, zone)
		detected, err := rackdetect.Detect(context.Background())
		require.NoError(t, err)
		_, err = kafka.ZoneClientID(kafka.ZoneWarpStream, "myapp", detected)
		assert.NoError(t, err, "zone %q", detected)
	}
}

// The client id ZoneClientID returns reaches the brokers unchanged in the
// header of every request, from a Dialer and from a Writer's Transport.
func TestZoneClientIDOnTheWire(t *testing.T) {
	const topic = "zone-client-id"
	for _, tc := range []struct {
		backend  kafka.ZoneBackend
		clientID string
	}{
		{kafka.ZoneWarpStream, "orders"},
		{kafka.ZoneWarpStream, ""}, // not replaced by DefaultClientID
		{kafka.ZoneInkless, "orders"},
		{kafka.ZoneBufstream, "orders;label.team=payments"},
	} {
		tc := tc
		id, err := kafka.ZoneClientID(tc.backend, tc.clientID, "us-east-1a")
		require.NoError(t, err)

		newCluster := func(t *testing.T) *fakebroker.Cluster {
			c := fakebroker.NewCluster(t, fakebroker.Config{})
			c.CreateTopic(topic, 1, 1)
			// The fake does not model InitProducerId.
			c.Broker(1).Handle(protocol.InitProducerId, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
				return &protocol.InitProducerIdResponse{ProducerID: 1000}, fakebroker.Action{}
			})
			return c
		}
		ctx := func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			t.Cleanup(cancel)
			return ctx
		}

		t.Run(fmt.Sprintf("%s/%q/Dialer", tc.backend, id), func(t *testing.T) {
			c := newCluster(t)
			conn, err := (&kafka.Dialer{ClientID: id, Timeout: 5 * time.Second}).DialLeader(ctx(t), "tcp", c.Broker(1).Addr(), topic, 0)
			require.NoError(t, err)
			_, err = conn.ReadPartitions(topic)
			require.NoError(t, err)
			require.NoError(t, conn.Close())
			assertClientIDs(t, c.Broker(1), id, protocol.ApiVersions, protocol.Metadata)
		})

		t.Run(fmt.Sprintf("%s/%q/Writer", tc.backend, id), func(t *testing.T) {
			c := newCluster(t)
			w := &kafka.Writer{
				Addr:         kafka.TCP(c.Addrs()...),
				Topic:        topic,
				RequiredAcks: kafka.RequireAll,
				Transport:    &kafka.Transport{ClientID: id},
			}
			require.NoError(t, w.WriteMessages(ctx(t), kafka.Message{Value: []byte("v")}))
			require.NoError(t, w.Close())
			assertClientIDs(t, c.Broker(1), id, protocol.Metadata, protocol.Produce)
		})
	}
}

// assertClientIDs checks that the broker received at least one request of
// each kind in must, and that every request it received, of any kind,
// carried the client id want.
func assertClientIDs(t *testing.T, b *fakebroker.Broker, want string, must ...protocol.ApiKey) {
	t.Helper()
	for _, key := range must {
		assert.NotEmpty(t, b.Received(key), "no %s request received", key)
	}
	n := 0
	for key := range protocol.Implemented() {
		for _, r := range b.Received(key) {
			n++
			if assert.NotNil(t, r.Header.ClientID, "%s request without a client id", key) {
				assert.Equal(t, want, *r.Header.ClientID, "client id of a %s request", key)
			}
		}
	}
	assert.NotZero(t, n, "the broker received no request")
}

// Each backend reads the zone under its own key; ZoneClientID spells it.
func ExampleZoneClientID() {
	for _, backend := range []kafka.ZoneBackend{kafka.ZoneWarpStream, kafka.ZoneInkless, kafka.ZoneBufstream} {
		id, err := kafka.ZoneClientID(backend, "orders", "us-east-1a")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(id)
	}
	_, err := kafka.ZoneClientID(kafka.ZoneWarpStream, "orders,ws_az=us-east-1b", "us-east-1a")
	fmt.Println(errors.Is(err, kafka.ErrClientIDHasZone))
	// Output:
	// orders,ws_az=us-east-1a
	// orders,diskless_az=us-east-1a
	// orders,zone=us-east-1a
	// true
}

// The zone can come from package rackdetect (KAFKA_CLIENT_RACK first, then
// the sources in order). The Dialer's ClientID also goes to the Reader;
// a Writer takes it from its Transport.
func ExampleZoneClientID_rackdetect() {
	ctx := context.Background()
	zone, err := rackdetect.Detect(ctx, rackdetect.Kubernetes{}, rackdetect.EC2{})
	if err != nil {
		log.Fatalf("no zone: %v", err)
	}
	id, err := kafka.ZoneClientID(kafka.ZoneWarpStream, "orders", zone)
	if err != nil {
		log.Fatal(err)
	}
	w := &kafka.Writer{
		Addr:      kafka.TCP("localhost:9092"),
		Topic:     "orders",
		Transport: &kafka.Transport{ClientID: id},
	}
	defer w.Close()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{"localhost:9092"},
		Topic:   "orders",
		Dialer:  &kafka.Dialer{ClientID: id, Timeout: 10 * time.Second},
	})
	defer r.Close()
}
