// Package e2e is the end-to-end consume benchmark: every client reads the
// same pre-produced records of a topic on a real cluster, each run in a
// child process of its own so that its CPU time, peak RSS and sockets are
// that client's alone. cmd/e2e runs the matrix; RESULTS.md says how.
package e2e

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
)

// keySize is the length of every key: the record's index in decimal.
const keySize = 16

// filler is the text the middle of every value is cut from, at an offset
// that depends on the record, so that values differ beyond their ends.
var filler = func() []byte {
	words := []string{"kafka ", "record ", "batch ", "fetch ", "offset ", "rack ", "replica ", "leader ", "follower ", "epoch "}
	var b []byte
	for i := 0; len(b) < 1<<16; i++ {
		b = append(b, words[(i*7+i/10)%len(words)]...)
	}
	return b
}()

// Record returns the key and value of record i (0-based over the whole
// topic) for the given value size, appended to buf. The value starts with
// the key and ends with 8 hex digits of i, so a checksum of both ends of it
// tells records apart.
func Record(buf []byte, i, valueSize int) (key, value []byte) {
	if valueSize < 2*keySize {
		valueSize = 2 * keySize
	}
	buf = fmt.Appendf(buf[:0], "%016d", i)
	key = buf[:keySize:keySize]
	buf = append(buf, key...)
	off := (i * 131) % (len(filler) - valueSize)
	buf = append(buf, filler[off:off+valueSize-2*keySize]...)
	buf = fmt.Appendf(buf, "%08x%08x", uint32(i*2654435761), uint32(i))
	return key, buf[keySize : keySize+valueSize : keySize+valueSize]
}

// Sum is an order-independent checksum of a set of records: their count,
// payload bytes and a sum of per-record hashes. A missing, repeated or
// altered record changes it.
type Sum struct {
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
	Hash    uint64 `json:"hash"`
}

// Add adds one record. With full set it hashes every byte of the key and
// value (FNV-1a); otherwise only the key and both 16-byte ends of the value,
// cheap enough not to weigh on the CPU figures.
func (s *Sum) Add(key, value []byte, full bool) {
	s.Records++
	s.Bytes += int64(len(key) + len(value))
	if full {
		h := fnv.New64a()
		h.Write(key)
		h.Write([]byte{0})
		h.Write(value)
		s.Hash += h.Sum64()
		return
	}
	x := uint64(len(value))*0x9e3779b97f4a7c15 ^ uint64(len(key))
	x += mixEnds(key)
	x = x*31 + mixEnds(value)
	s.Hash += splitmix(x)
}

// Merge adds the records of o.
func (s *Sum) Merge(o Sum) {
	s.Records += o.Records
	s.Bytes += o.Bytes
	s.Hash += o.Hash
}

func mixEnds(b []byte) uint64 {
	if len(b) < 16 {
		h := fnv.New64a()
		h.Write(b)
		return h.Sum64()
	}
	n := len(b)
	return binary.LittleEndian.Uint64(b)*3 + binary.LittleEndian.Uint64(b[8:])*5 +
		binary.LittleEndian.Uint64(b[n-16:])*7 + binary.LittleEndian.Uint64(b[n-8:])*11
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Expected is the checksum of records 0..n-1 of the given value size.
func Expected(n, valueSize int, full bool) Sum {
	var s Sum
	buf := make([]byte, 0, valueSize+2*keySize+32)
	for i := 0; i < n; i++ {
		k, v := Record(buf, i, valueSize)
		s.Add(k, v, full)
	}
	return s
}
