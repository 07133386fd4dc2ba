package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	segproto "github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rackfetch/kafka-go/protocol"
)

// A decoder turns the records bytes of one fetched partition into records
// and hands each to visit, with its key and value readable. It is made once
// per benchmark and reused, as a client reuses its state between fetches.
type decoder func(visit func(offset int64, key, value []byte)) error

// client is one peer in the comparison.
type client struct {
	name string
	new  func(data []byte, maxValue int) decoder
}

var clients = []client{
	{"rackfetch", newRackfetch},
	{"franz-go", newFranz},
	{"kafka-go", newSegmentio},
}

// newRackfetch decodes as Conn and Reader do (batch.go): a reusable
// protocol.RecordReader reset over the partition's records, bounded by the
// high watermark; keys and values alias the input.
func newRackfetch(data []byte, _ int) decoder {
	var r protocol.RecordReader
	opts := protocol.RecordReadOptions{MinOffset: 0, MaxOffset: numRecords}
	return func(visit func(int64, []byte, []byte)) error {
		r.Reset(data, opts)
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			visit(rec.Offset, rec.Key, rec.Value)
		}
	}
}

// newFranz decodes as franz-go's consumer does once a Fetch response is
// parsed: kgo.ProcessFetchPartition over the partition (whose
// RecordBatches field is the records bytes, aliased as kmsg parsing leaves
// it), with one default decompressor kept for the whole benchmark as a
// client keeps one. It returns []*kgo.Record whose keys and values alias
// the input (or the decompressed batch).
func newFranz(data []byte, _ int) decoder {
	dec := kgo.DefaultDecompressor()
	rp := &kmsg.FetchResponseTopicPartition{
		Partition:        0,
		HighWatermark:    numRecords,
		LastStableOffset: numRecords,
		RecordBatches:    data,
	}
	opts := kgo.ProcessFetchPartitionOpts{
		Offset:         0,
		IsolationLevel: kgo.ReadUncommitted(),
		Topic:          "bench",
		Partition:      0,
	}
	return func(visit func(int64, []byte, []byte)) error {
		fp, _ := kgo.ProcessFetchPartition(opts, rp, dec, nil)
		if fp.Err != nil {
			return fp.Err
		}
		for _, rec := range fp.Records {
			visit(rec.Offset, rec.Key, rec.Value)
		}
		return nil
	}
}

// newSegmentio decodes with segmentio/kafka-go's protocol.RecordSet.ReadFrom
// (what its Client.Fetch uses) from a bufio.Reader, as its protocol
// connection reads (bufio.NewReader's default size), over the records bytes
// behind their int32 size, as they sit in a Fetch response. Its records give
// keys and values as readers over pooled pages: they are read into one
// reused buffer (the only way to get the bytes) and closed, which hands the
// pages back to its pool as documented.
func newSegmentio(data []byte, maxValue int) decoder {
	in := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(data)), uint32(len(data)))
	in = append(in, data...)
	src := bytes.NewReader(in)
	br := bufio.NewReader(src)
	key := make([]byte, 64)
	value := make([]byte, maxValue)
	return func(visit func(int64, []byte, []byte)) error {
		src.Reset(in)
		br.Reset(src)
		var rs segproto.RecordSet
		if _, err := rs.ReadFrom(br); err != nil {
			return err
		}
		if rs.Records == nil {
			return fmt.Errorf("kafka-go: no records")
		}
		for {
			rec, err := rs.Records.ReadRecord()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			var k, v []byte
			if rec.Key != nil {
				k = key[:rec.Key.Len()]
				if _, err := io.ReadFull(rec.Key, k); err != nil {
					return err
				}
				rec.Key.Close()
			}
			if rec.Value != nil {
				v = value[:rec.Value.Len()]
				if _, err := io.ReadFull(rec.Value, v); err != nil {
					return err
				}
				rec.Value.Close()
			}
			visit(rec.Offset, k, v)
		}
	}
}
