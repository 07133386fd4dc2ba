package fakebroker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rackfetch/kafka-go/protocol"
)

// storedBatch is a record batch as appended, its base offset and leader
// epoch rewritten (neither is covered by the CRC).
type storedBatch struct {
	base, last int64
	stamps     []stamp // per record, for ListOffsets by time
	data       []byte
}

type stamp struct{ offset, timestamp int64 }

var errBatchCount = errors.New("exactly one record batch is required")

// appendBatch validates one v2 record batch and appends it at the log end
// in the current leader epoch, returning its base offset.
func (pt *partition) appendBatch(data []byte) (int64, error) {
	h, err := protocol.ParseRecordBatchHeader(data)
	if err != nil {
		return -1, err
	}
	if size := 12 + int64(h.Length); size != int64(len(data)) {
		return -1, errBatchCount // a cut batch, or more than one
	}
	if h.NumRecords <= 0 || h.LastOffsetDelta < 0 {
		return -1, fmt.Errorf("%w: %d records, last offset delta %d", protocol.ErrCorruptRecords, h.NumRecords, h.LastOffsetDelta)
	}
	// Reading checks the CRC and every record, compressed or not.
	recs, err := protocol.NewRecordReader(data, protocol.RecordReadOptions{MinOffset: h.BaseOffset}).ReadAll(nil)
	if err != nil {
		return -1, err
	}
	base := pt.logEnd
	sb := storedBatch{base: base, last: base + int64(h.LastOffsetDelta), data: append([]byte(nil), data...)}
	for _, r := range recs {
		ts := r.Timestamp
		if h.LogAppendTime() {
			ts = h.MaxTimestamp
		}
		sb.stamps = append(sb.stamps, stamp{base + r.Offset - h.BaseOffset, ts})
	}
	binary.BigEndian.PutUint64(sb.data[0:], uint64(base))
	binary.BigEndian.PutUint32(sb.data[12:], uint32(pt.epoch))
	pt.log = append(pt.log, sb)
	pt.logEnd = sb.last + 1
	return base, nil
}

// AppendBatch appends a v2 record batch (built with
// protocol.RecordBatchBuilder, compressed or not) to a partition's log as
// if the leader had received it, and returns its base offset.
func (c *Cluster) AppendBatch(topicName string, p int32, batch []byte) int64 {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	base, err := c.mustPart(topicName, p).appendBatch(batch)
	if err != nil {
		c.fatalf("AppendBatch(%s/%d): %v", topicName, p, err)
	}
	return base
}

// Append appends records (Key, Value, Headers and Timestamp used; a zero
// Timestamp is the cluster clock's now) as one batch and returns the
// offset of the first.
func (c *Cluster) Append(topicName string, p int32, recs ...protocol.Record) int64 {
	c.t.Helper()
	bb := protocol.NewRecordBatchBuilder()
	now := c.cfg.Now().UnixMilli()
	for _, r := range recs {
		if r.Timestamp == 0 {
			r.Timestamp = now
		}
		bb.Add(r)
	}
	batch, err := bb.AppendTo(nil)
	if err != nil {
		c.fatalf("Append(%s/%d): %v", topicName, p, err)
	}
	return c.AppendBatch(topicName, p, batch)
}

// AppendRecords appends records with these values (no key) as one batch
// and returns the offset of the first.
func (c *Cluster) AppendRecords(topicName string, p int32, values ...string) int64 {
	c.t.Helper()
	recs := make([]protocol.Record, len(values))
	for i, v := range values {
		recs[i].Value = []byte(v)
	}
	return c.Append(topicName, p, recs...)
}

// Records returns the records of a partition's log from the log start, as
// the leader holds them.
func (c *Cluster) Records(topicName string, p int32) []protocol.Record {
	c.t.Helper()
	data, start := func() ([]byte, int64) {
		c.mu.Lock()
		defer c.mu.Unlock()
		pt := c.mustPart(topicName, p)
		var data []byte
		for _, sb := range pt.log {
			data = append(data, sb.data...)
		}
		return data, pt.logStart
	}()
	recs, err := protocol.NewRecordReader(data, protocol.RecordReadOptions{MinOffset: start}).ReadAll(nil)
	if err != nil {
		c.fatalf("Records(%s/%d): %v", topicName, p, err)
	}
	return recs
}
