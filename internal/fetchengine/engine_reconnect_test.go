package fetchengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
)

// closingConn answers like fakeConn, except that its close-th request
// finds the connection closed by the broker.
type closingConn struct {
	*fakeConn
	close int
	n     int
}

func (c *closingConn) Fetch(ctx context.Context, req *protocol.FetchRequest, by time.Time) (*protocol.FetchResponse, error) {
	c.mu.Lock()
	c.n++
	n := c.n
	if n == c.close {
		c.broken = true
	}
	c.mu.Unlock()
	if n == c.close {
		return nil, fmt.Errorf("waiting for the Fetch response: %w", io.EOF)
	}
	return c.fakeConn.Fetch(ctx, req, by)
}

// engineDialing returns an engine whose dials return the conns of dial in
// turn, and counts them.
func engineDialing(t *testing.T, dial func(n int) (Conn, error)) (*Engine, func() int) {
	var mu sync.Mutex
	dials := 0
	e := New(Config{
		Dial: func(context.Context, int) (Conn, error) {
			mu.Lock()
			dials++
			n := dials
			mu.Unlock()
			return dial(n)
		},
		MaxWait: func(Want) time.Duration { return time.Second },
	})
	t.Cleanup(e.Close)
	return e, func() int { mu.Lock(); defer mu.Unlock(); return dials }
}

// A connection that served before and that the broker closes is not a
// failed broker: the request goes again on a new connection, and the
// caller gets its answer.
func TestEngineReconnectsOnceWhenTheBrokerClosesAConnection(t *testing.T) {
	first := &closingConn{fakeConn: newFakeConn(), close: 2}
	second := newFakeConn()
	e, dials := engineDialing(t, func(n int) (Conn, error) {
		if n == 1 {
			return first, nil
		}
		return second, nil
	})
	require.NoError(t, e.Fetch(context.Background(), 1, want(0, 0)).Err)
	r := e.Fetch(context.Background(), 1, want(0, 1))
	require.NoError(t, r.Err)
	assert.True(t, r.Data)
	assert.Equal(t, 2, dials())
}

// A dead broker closes the connection and then refuses the new one: the
// caller learns that the dial failed.
func TestEngineClosedThenRefusedIsADialFailure(t *testing.T) {
	refused := errors.New("connection refused")
	first := &closingConn{fakeConn: newFakeConn(), close: 2}
	e, dials := engineDialing(t, func(n int) (Conn, error) {
		if n == 1 {
			return first, nil
		}
		return nil, refused
	})
	require.NoError(t, e.Fetch(context.Background(), 1, want(0, 0)).Err)
	r := e.Fetch(context.Background(), 1, want(0, 1))
	assert.True(t, r.DialFailed)
	assert.ErrorIs(t, r.Err, refused)
	assert.Equal(t, 2, dials())
}

// A connection dialed for the request that the broker closes at once is
// not retried: that broker is failing, and the caller hears of it.
func TestEngineFreshConnectionClosedIsAnError(t *testing.T) {
	first := &closingConn{fakeConn: newFakeConn(), close: 1}
	e, dials := engineDialing(t, func(int) (Conn, error) { return first, nil })
	r := e.Fetch(context.Background(), 1, want(0, 0))
	assert.ErrorIs(t, r.Err, io.EOF)
	assert.False(t, r.DialFailed)
	assert.Equal(t, 1, dials())
}
