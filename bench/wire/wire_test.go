package wire

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWireCountsFramesWrittenInPiecesAndBytesRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		// Two frames of 2+4 bytes each (API key, then 4 bytes), answered
		// with 10 bytes.
		if _, err := io.ReadFull(c, make([]byte, 2*(4+6))); err != nil {
			served <- err
			return
		}
		_, err = c.Write(make([]byte, 10))
		served <- err
	}()

	w := New()
	conn, err := w.Dial(context.Background(), "tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	frame := func(api uint16) []byte {
		b := make([]byte, 4+6)
		binary.BigEndian.PutUint32(b, 6)
		binary.BigEndian.PutUint16(b[4:], api)
		return b
	}
	both := append(frame(1), frame(3)...)
	for _, piece := range [][]byte{both[:3], both[3:12], both[12:]} {
		_, err := conn.Write(piece)
		require.NoError(t, err)
	}
	_, err = io.ReadFull(conn, make([]byte, 10))
	require.NoError(t, err)
	require.NoError(t, <-served)

	a := w.Snapshot()[ln.Addr().String()]
	assert.Equal(t, int64(2), a.Requests)
	assert.Equal(t, map[int16]int64{1: 1, 3: 1}, a.ByAPI)
	assert.Equal(t, int64(10), a.BytesRead)
	assert.Equal(t, int64(1), a.Dials)
	assert.Equal(t, int64(10), w.Snapshot().Sub(Snapshot{}).Total().BytesRead)
}
