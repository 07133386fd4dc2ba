package kafka

// Close of a Writer joins the background metadata refreshes it started.

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A write finds its topic's metadata stale and refreshes it in the
// background; the broker holds that answer. Close must end the refresh
// and wait for it instead of leaving it to wait out the Writer's read
// timeout. The connections close only when the test ends (keptConns), so
// that closing the cluster's connections cannot end the refresh by
// itself: only the Writer's cancelling it can.
func TestWriterCloseJoinsMetadataRefresh(t *testing.T) {
	c := wtCluster(t, 1, 1)
	b := c.Broker(1)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	var holding atomic.Bool
	b.Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		var a fakebroker.Action
		if holding.Load() {
			a.Wait = hold
		}
		return b.Default(req, hdr), a
	})
	conns := &keptConns{}
	t.Cleanup(conns.closeAll)
	w := wtWriter(t, c)
	w.Transport = &Transport{MetadataTTL: time.Nanosecond, Dial: conns.dial} // every later write finds it stale
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, wtMessages("a", 1)...))

	holding.Store(true)
	held := b.Await(protocol.Metadata, b.Requests(protocol.Metadata)+1)
	require.NoError(t, w.WriteMessages(ctx, wtMessages("b", 1)...))
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("no background metadata refresh after the TTL")
	}

	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the background metadata refresh within 5 s")
	}
	assert.Empty(t, goroutinesIn("(*transportCluster).partitionCount"), "a metadata refresh survived Close")
}

// keptConns dials connections whose Close does nothing: closeAll closes them.
type keptConns struct {
	mu    sync.Mutex
	conns []net.Conn
}

type keptConn struct{ net.Conn }

func (keptConn) Close() error { return nil }

func (k *keptConns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.conns = append(k.conns, c)
	k.mu.Unlock()
	return keptConn{c}, nil
}

func (k *keptConns) closeAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range k.conns {
		c.Close()
	}
}
