package bench

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/rackfetch/kafka-go/protocol"
)

// Shape of the decoded data: batches × records per batch.
const (
	numBatches      = 100
	recordsPerBatch = 100
	numRecords      = numBatches * recordsPerBatch
	baseTimestamp   = 1700000000000
)

var codecs = []struct {
	name string
	c    compress.Compression
}{
	{"none", compress.None},
	{"gzip", compress.Gzip},
	{"snappy", compress.Snappy},
	{"lz4", compress.Lz4},
	{"zstd", compress.Zstd},
}

var valueSizes = []int{100, 1024}

// records returns numRecords records with valueSize-byte values made of
// words (so that codecs compress them as they would text) and 10-byte keys.
// Offsets run from 0.
func records(valueSize int) []protocol.Record {
	rnd := rand.New(rand.NewSource(int64(valueSize)))
	words := []string{"kafka ", "record ", "batch ", "fetch ", "offset ", "rack ", "replica ", "leader ", "follower ", "epoch "}
	recs := make([]protocol.Record, numRecords)
	for i := range recs {
		v := make([]byte, 0, valueSize+16)
		for len(v) < valueSize {
			v = append(v, words[rnd.Intn(len(words))]...)
		}
		recs[i] = protocol.Record{
			Offset:    int64(i),
			Timestamp: baseTimestamp + int64(i),
			Key:       []byte(fmt.Sprintf("key-%06d", i)),
			Value:     v[:valueSize:valueSize],
		}
	}
	return recs
}

// recordBatches encodes recs as v2 record batches of recordsPerBatch
// records, compressed with c: the bytes of a Fetch response partition's
// records field. Every client decodes these same bytes.
func recordBatches(tb testing.TB, recs []protocol.Record, c compress.Compression) []byte {
	var data []byte
	bb := protocol.NewRecordBatchBuilder()
	bb.Compression = c
	for i := 0; i < len(recs); i += recordsPerBatch {
		bb.Reset()
		bb.BaseOffset = recs[i].Offset
		for _, r := range recs[i : i+recordsPerBatch] {
			bb.Add(r)
		}
		var err error
		if data, err = bb.AppendTo(data); err != nil {
			tb.Fatal(err)
		}
	}
	return data
}
