package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// The path check's rate is what was read over the last readRateWindow:
// older seconds drop out, a second's bucket is reused when its time comes
// round again.
func TestReadMeterRate(t *testing.T) {
	var m readMeter
	tp := topicPartition{"t", 0}
	t0 := time.Unix(1000, 0)
	assert.Zero(t, m.rate(t0))
	for i := 0; i < 16; i++ {
		m.add(t0.Add(time.Duration(i)*time.Second), 1600, tp, int64(i))
	}
	now := t0.Add(15 * time.Second)
	assert.InDelta(t, 1600.0, m.rate(now), 1e-9, "16 s of 1600 B/s")
	m.add(t0.Add(16*time.Second), 16000, tp, 16) // reuses the first second's bucket
	assert.InDelta(t, (15*1600.0+16000)/16, m.rate(t0.Add(16*time.Second)), 1e-9)
	assert.Zero(t, m.rate(t0.Add(40*time.Second)), "nothing read for longer than the window")
}

// The samples keep, per partition, the oldest read within the window (the
// most records follow it), oldest first, for at most maxReadSamples
// partitions; a partition whose sample left the window gets a new one.
func TestReadMeterSamples(t *testing.T) {
	var m readMeter
	a, b := topicPartition{"t", 0}, topicPartition{"t", 1}
	t0 := time.Unix(1000, 0)
	m.add(t0, 10, a, 100)
	for i := 0; i < 100; i++ {
		m.add(t0.Add(time.Duration(i)*10*time.Millisecond), 10, b, int64(200+i))
	}
	m.add(t0.Add(time.Second), 10, a, 150)
	assert.Equal(t, []readSample{{a, 100, 1000}, {b, 200, 1000}}, m.samples(t0.Add(time.Second)))
	m.add(t0.Add(16*time.Second), 10, a, 400)
	assert.Equal(t, []readSample{{a, 400, 1016}}, m.samples(t0.Add(16*time.Second)), "a's first sample left the window, b's too")
	assert.Empty(t, m.samples(t0.Add(time.Minute)))

	// Full: a new partition waits until samples leave the window.
	for p := 0; p < 2*maxReadSamples; p++ {
		m.add(t0.Add(20*time.Second), 10, topicPartition{"u", p}, 0)
	}
	assert.Len(t, m.samples(t0.Add(20*time.Second)), maxReadSamples)
	m.add(t0.Add(40*time.Second), 10, topicPartition{"v", 0}, 7)
	assert.Equal(t, []readSample{{topicPartition{"v", 0}, 7, 1040}}, m.samples(t0.Add(40*time.Second)))
}

// The path check's fetch measures what the path carries: records the
// Readers read, fetched again from the probed broker. A broker behind a
// slow path fails it, a fast one passes, and too few records measure
// nothing (the check then falls back to the broker's configuration).
func TestCheckPathByFetch(t *testing.T) {
	cl := fakebroker.NewCluster(t, fakebroker.Config{})
	cl.CreateTopic("t", 5, 1)
	value := strings.Repeat("x", 1000)
	for i := 0; i < 200; i++ {
		cl.AppendRecords("t", 0, value)
	}
	for p := int32(1); p < 5; p++ {
		for i := 0; i < 6; i++ {
			cl.AppendRecords("t", p, value)
		}
	}
	slow := make(chan struct{})
	cl.Broker(1).Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		select {
		case <-slow:
			return cl.Broker(1).Default(req, hdr), fakebroker.Action{Delay: 500 * time.Millisecond}
		default:
			return cl.Broker(1).Default(req, hdr), fakebroker.Action{}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := (&Dialer{}).DialContext(ctx, "tcp", cl.Broker(1).Addr())
	require.NoError(t, err)
	defer conn.Close()
	smp := []readSample{{tp: topicPartition{"t", 0}, offset: 0}}

	measured, err := checkPathByFetch(ctx, conn, smp, 100e3)
	assert.True(t, measured)
	assert.NoError(t, err, "100 KB at loopback speed")

	measured, err = checkPathByFetch(ctx, conn, []readSample{{tp: smp[0].tp, offset: 195}}, 100e3)
	assert.False(t, measured, "5 KB of records measure nothing")
	assert.NoError(t, err)

	// Many partitions holding little each measure together.
	var few []readSample
	for p := 1; p < 5; p++ {
		few = append(few, readSample{tp: topicPartition{"t", p}, offset: 0})
	}
	measured, err = checkPathByFetch(ctx, conn, few, 100e3)
	assert.True(t, measured, "4 partitions of 6 KB")
	assert.NoError(t, err)

	close(slow)
	measured, err = checkPathByFetch(ctx, conn, smp, 1e6)
	assert.True(t, measured)
	assert.True(t, errors.Is(err, consumer.ErrSlowPath), "200 KB in more than 500 ms, for a need of 1 MB/s: %v", err)
	assert.ErrorContains(t, err, "Fetch")

	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	measured, err = checkPathByFetch(short, conn, smp, 100e3)
	assert.True(t, measured)
	assert.True(t, errors.Is(err, consumer.ErrSlowPath), "no answer within the probe's time: %v", err)
}
