package fakebroker_test

import (
	"net"
	"testing"

	"github.com/rackfetch/kafka-go/protocol"
)

// rawClient talks to a fake broker with bare frames through package
// protocol, one request at a time.
type rawClient struct {
	t    testing.TB
	conn net.Conn
	corr int32
}

func dial(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, conn: c}
}

// send writes req at version v and returns the correlation id used.
func (c *rawClient) send(req protocol.Request, v int16) int32 {
	c.t.Helper()
	c.corr++
	if _, err := c.conn.Write(protocol.AppendRequest(nil, req, v, c.corr, "test")); err != nil {
		c.t.Fatalf("writing %s: %v", req.Key(), err)
	}
	return c.corr
}

// recv reads the answer to req sent at version v with correlation id corr.
func (c *rawClient) recv(req protocol.Request, v int16, corr int32) (protocol.Response, error) {
	body, err := protocol.ReadFrame(c.conn, nil, protocol.MaxResponseSize)
	if err != nil {
		return nil, err
	}
	resp := req.NewResponse()
	return resp, protocol.DecodeResponse(body, resp, v, protocol.IsFlexible(req, v), corr)
}

// recvV0 reads an ApiVersions answer sent in v0, as brokers answer
// versions they do not support.
func (c *rawClient) recvV0(corr int32) *protocol.ApiVersionsResponse {
	c.t.Helper()
	body, err := protocol.ReadFrame(c.conn, nil, protocol.MaxResponseSize)
	if err != nil {
		c.t.Fatal(err)
	}
	var resp protocol.ApiVersionsResponse
	if err := protocol.DecodeResponse(body, &resp, 0, false, corr); err != nil {
		c.t.Fatal(err)
	}
	return &resp
}

// roundTrip sends req and returns the answer, failing the test on error.
func (c *rawClient) roundTrip(req protocol.Request, v int16) protocol.Response {
	c.t.Helper()
	resp, err := c.tryRoundTrip(req, v)
	if err != nil {
		c.t.Fatalf("%s v%d: %v", req.Key(), v, err)
	}
	return resp
}

func (c *rawClient) tryRoundTrip(req protocol.Request, v int16) (protocol.Response, error) {
	c.t.Helper()
	corr := c.send(req, v)
	return c.recv(req, v, corr)
}
