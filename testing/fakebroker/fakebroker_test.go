package fakebroker_test

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"net"
	"syscall"
	"testing"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

func TestApiVersions(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	old := c.Broker(2)
	old.SetMaxVersion(protocol.Fetch, 10)

	for _, b := range c.Brokers() {
		for v := int16(0); v <= 3; v++ {
			resp := dial(t, b.Addr()).roundTrip(&protocol.ApiVersionsRequest{ClientSoftwareName: "x", ClientSoftwareVersion: "1"}, v).(*protocol.ApiVersionsResponse)
			if resp.ErrorCode != 0 {
				t.Fatalf("broker %d v%d: error %d", b.ID(), v, resp.ErrorCode)
			}
			got := resp.Versions()
			for k, want := range protocol.Implemented() {
				if b == old && k == protocol.Fetch {
					want.Max = 10
				}
				if got[k] != want {
					t.Fatalf("broker %d v%d: %s advertised %+v, want %+v", b.ID(), v, k, got[k], want)
				}
			}
		}
	}
}

func TestApiVersionsTooNew(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	cl := dial(t, c.Broker(1).Addr())
	// A version the broker does not know: the answer comes in v0 with
	// UNSUPPORTED_VERSION and the supported ranges (KIP-511).
	frame := protocol.AppendRequest(nil, &protocol.ApiVersionsRequest{}, 3, 9, "test")
	frame[7] = 99 // version 3 -> 99, same flexible header
	if _, err := cl.conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	if resp := cl.recvV0(9); resp.ErrorCode != 35 || resp.Versions()[protocol.ApiVersions].Max != 3 {
		t.Fatalf("got %+v", resp)
	}
}

func TestOldBrokerClosesOnTooNewVersion(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	b := c.Broker(1)
	b.SetMaxVersion(protocol.ApiVersions, 2)
	cl := dial(t, b.Addr())
	cl.roundTrip(&protocol.ApiVersionsRequest{}, 2)
	resp := cl.recvV0(cl.send(&protocol.ApiVersionsRequest{}, 3))
	if resp.ErrorCode != 35 || resp.Versions()[protocol.ApiVersions].Max != 2 {
		t.Fatalf("error %d, want UNSUPPORTED_VERSION", resp.ErrorCode)
	}
}

func TestScriptedApiVersions(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	b := c.Broker(1)
	b.Script(protocol.ApiVersions, 2, fakebroker.Step{ErrorCode: 35})
	release := make(chan struct{})
	b.Script(protocol.ApiVersions, 3, fakebroker.Step{Action: fakebroker.Action{Wait: release}})
	b.Script(protocol.ApiVersions, 4, fakebroker.Step{Action: fakebroker.Action{Close: true}})

	cl := dial(t, b.Addr())
	req := &protocol.ApiVersionsRequest{}
	if r := cl.roundTrip(req, 1).(*protocol.ApiVersionsResponse); r.ErrorCode != 0 {
		t.Fatalf("1st: error %d", r.ErrorCode)
	}
	if r := cl.roundTrip(req, 1).(*protocol.ApiVersionsResponse); r.ErrorCode != 35 {
		t.Fatalf("2nd: error %d, want 35", r.ErrorCode)
	}
	// The 3rd is held until the test releases it.
	corr := cl.send(req, 1)
	<-b.Await(protocol.ApiVersions, 3)
	close(release)
	if _, err := cl.recv(req, 1, corr); err != nil {
		t.Fatalf("3rd: %v", err)
	}
	// The 4th closes the connection.
	if _, err := cl.tryRoundTrip(req, 1); err == nil {
		t.Fatal("4th: answered, want the connection closed")
	}
	if n := b.Requests(protocol.ApiVersions); n != 4 {
		t.Fatalf("Requests = %d, want 4", n)
	}
	// Later requests get the default again.
	dial(t, b.Addr()).roundTrip(req, 1)
}

func TestHandleReplaces(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	b := c.Broker(1)
	b.Handle(protocol.ApiVersions, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := b.Default(req, hdr).(*protocol.ApiVersionsResponse)
		resp.ThrottleTimeMs = 77
		return resp, fakebroker.Action{}
	})
	if r := dial(t, b.Addr()).roundTrip(&protocol.ApiVersionsRequest{}, 2).(*protocol.ApiVersionsResponse); r.ThrottleTimeMs != 77 || len(r.ApiKeys) == 0 {
		t.Fatalf("got %+v", r)
	}
}

func TestStopStart(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	b := c.Broker(2)
	addr := b.Addr()
	cl := dial(t, addr)
	cl.roundTrip(&protocol.ApiVersionsRequest{}, 3)

	// A held answer is dropped when the broker dies.
	never := make(chan struct{})
	b.ScriptNext(protocol.ApiVersions, fakebroker.Step{Action: fakebroker.Action{Wait: never}})
	corr := cl.send(&protocol.ApiVersionsRequest{}, 3)
	<-b.Await(protocol.ApiVersions, 2)
	b.Stop()
	if _, err := cl.recv(&protocol.ApiVersionsRequest{}, 3, corr); err == nil {
		t.Fatal("a stopped broker answered")
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Fatal("a stopped broker accepted a connection")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Logf("dial error: %v", err)
	}

	b.Start()
	if b.Addr() != addr {
		t.Fatalf("restarted on %s, want %s", b.Addr(), addr)
	}
	dial(t, addr).roundTrip(&protocol.ApiVersionsRequest{}, 3)
}

func TestGarbageClosesConnection(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	for _, frame := range [][]byte{
		{0, 0, 0, 2, 0, 18},                                // truncated header
		{0, 0, 0, 8, 0x7f, 0x7f, 0, 0, 0, 0, 0, 1},         // unknown api key
		{0xff, 0xff, 0xff, 0xff},                           // negative size
		{0, 0, 0, 10, 0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff}, // metadata v12, no body
	} {
		cl := dial(t, c.Broker(1).Addr())
		if _, err := cl.conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(cl.conn); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("frame %x: %v", frame, err)
		}
	}
	// The broker still serves.
	dial(t, c.Broker(1).Addr()).roundTrip(&protocol.ApiVersionsRequest{}, 3)
}

// TestHostileRequests sends every request the fake decodes, at every
// version, both zero-valued and with random bodies: the broker answers or
// closes the connection, never panics (a panic fails the test through the
// broker's recover), and keeps serving.
func TestHostileRequests(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	c.CreateTopic("t", 1, 2)
	c.AppendRecords("t", 0, "a")
	addr := c.Broker(1).Addr()
	rnd := rand.New(rand.NewSource(1))
	for key, vr := range protocol.Implemented() {
		for v := vr.Min; v <= vr.Max; v++ {
			req := protocol.NewRequest(key)
			cl := dial(t, addr)
			corr := cl.send(req, v)
			// Closing our side makes the broker close once it is done, so
			// requests it does not answer (acks=0) cannot hang the test.
			cl.conn.(*net.TCPConn).CloseWrite()
			if _, err := cl.recv(req, v, corr); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("zero %s v%d: %v", key, v, err)
			}
			for i := 0; i < 20; i++ {
				frame := protocol.AppendRequest(nil, req, v, 1, "fuzz")
				hdrLen := len(protocol.AppendRequest(nil, &protocol.ApiVersionsRequest{}, 0, 1, "fuzz"))
				if protocol.IsFlexible(req, v) {
					hdrLen++
				}
				body := make([]byte, rnd.Intn(64))
				rnd.Read(body)
				frame = append(frame[:hdrLen], body...)
				binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
				cl := dial(t, addr)
				if _, err := cl.conn.Write(frame); err != nil {
					t.Fatal(err)
				}
				cl.conn.(*net.TCPConn).CloseWrite()
				_, _ = protocol.ReadFrame(cl.conn, nil, protocol.MaxResponseSize)
				cl.conn.Close()
			}
		}
	}
	dial(t, addr).roundTrip(&protocol.ApiVersionsRequest{}, 3)
}
