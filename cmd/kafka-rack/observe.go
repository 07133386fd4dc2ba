package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
)

// observeBytes measures how many bytes each partition of the topic grew by
// during window: the end offsets before and after it, then the record
// batches between them fetched and their sizes summed, as they would travel
// to a consumer (batch headers and compression included). It returns the
// bytes per partition and the time between the two offset readings.
func observeBytes(ctx context.Context, cfg *config, parts []int, window time.Duration) (map[int]int64, time.Duration, error) {
	cl, _ := cfg.client()
	kparts := make([]kafka.Partition, len(parts))
	for i, id := range parts {
		kparts[i] = kafka.Partition{Topic: cfg.Topic, ID: id}
	}
	start := time.Now()
	before, err := lastOffsets(ctx, cl, cfg.Topic, kparts)
	if err != nil {
		return nil, 0, err
	}
	t := time.NewTimer(window)
	select {
	case <-ctx.Done():
		t.Stop()
		return nil, 0, fmt.Errorf("observing %q for %v: %w", cfg.Topic, window, ctx.Err())
	case <-t.C:
	}
	after, err := lastOffsets(ctx, cl, cfg.Topic, kparts)
	if err != nil {
		return nil, 0, err
	}
	elapsed := time.Since(start)
	grown, err := grownBytes(ctx, cfg, before, after)
	return grown, elapsed, err
}

// grownBytes sums, per partition, the sizes of the batches holding the
// offsets from before up to after.
func grownBytes(ctx context.Context, cfg *config, before, after map[int]int64) (map[int]int64, error) {
	cl, _ := cfg.client()
	rt := &recordSizer{inner: cl.Transport}
	cl.Transport = rt
	out := make(map[int]int64, len(before))
	for id, from := range before {
		n, err := rangeBytes(ctx, cl, rt, cfg.Topic, id, from, after[id])
		if err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, nil
}

// rangeFetchBytes bounds each fetch of rangeBytes (a variable: tests make
// it small to cut batches off).
var rangeFetchBytes int64 = 1 << 20

// rangeBytes sums the sizes of the batches of topic/partition holding
// offsets [from, to).
func rangeBytes(ctx context.Context, cl *kafka.Client, rt *recordSizer, topic string, partition int, from, to int64) (int64, error) {
	var total int64
	for off := from; off < to; {
		resp, err := cl.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: partition, Offset: off, MaxBytes: rangeFetchBytes, MaxWait: 100 * time.Millisecond})
		if err != nil {
			return 0, fmt.Errorf("measuring the bytes of %s/%d: %w", topic, partition, err)
		}
		if resp.Error != nil {
			return 0, fmt.Errorf("measuring the bytes of %s/%d at offset %d: %w", topic, partition, off, resp.Error)
		}
		n, next := batchBytes(rt.records(topic, partition), off, to)
		if next <= off {
			return 0, fmt.Errorf("measuring the bytes of %s/%d: no whole batch at offset %d (end offset %d)", topic, partition, off, to)
		}
		total += n
		off = next
	}
	return total, nil
}

// batchBytes sums the sizes of the whole batches of records that hold
// offsets in [from, to) and returns the offset after the last whole batch
// (from when there is none). Both batch formats start with an offset and a
// length; a v2 batch's offset is its first, an older entry's its last.
func batchBytes(records []byte, from, to int64) (n int64, next int64) {
	next = from
	for len(records) >= 12 {
		size := 12 + int64(int32(binary.BigEndian.Uint32(records[8:12])))
		if size < 12 || size > int64(len(records)) {
			break // cut off by MaxBytes: fetched again from next
		}
		first := int64(binary.BigEndian.Uint64(records))
		last := first
		if size >= 17 && records[16] == 2 {
			h, err := protocol.ParseRecordBatchHeader(records[:size])
			if err != nil {
				break
			}
			last = h.LastOffset()
		}
		if first >= to {
			break
		}
		if last >= from {
			n += size
			next = last + 1
		}
		records = records[size:]
	}
	return n, next
}

// recordSizer is a RoundTripper that keeps the raw record set of each
// partition of the last Fetch response, whose size Client.Fetch does not
// tell.
type recordSizer struct {
	inner kafka.RoundTripper
	mu    sync.Mutex
	last  *protocol.FetchResponse
}

func (r *recordSizer) RoundTrip(ctx context.Context, addr net.Addr, req protocol.Request) (protocol.Response, error) {
	inner := r.inner
	if inner == nil {
		inner = kafka.DefaultTransport
	}
	resp, err := inner.RoundTrip(ctx, addr, req)
	if f, ok := resp.(*protocol.FetchResponse); ok && err == nil {
		r.mu.Lock()
		r.last = f
		r.mu.Unlock()
	}
	return resp, err
}

// records returns the record set of topic/partition in the last Fetch
// response (one partition per request: Client.Fetch asks for one).
func (r *recordSizer) records(topic string, partition int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	for _, t := range r.last.Topics {
		for _, p := range t.Partitions {
			if int(p.PartitionIndex) == partition && (t.Topic == topic || t.Topic == "") {
				return p.Records
			}
		}
	}
	return nil
}
