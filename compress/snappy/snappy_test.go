package snappy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/rackfetch/kafka-go/compress/internal/limit"
)

// Raw snappy blocks written by hand from the format description: a uvarint
// length, then elements. 0x10 is a 5-byte literal; 0x08 a 3-byte literal;
// 0x15 0x03 copies 9 bytes from offset 3 (1-byte offset form).
var (
	rawHello  = []byte{0x05, 0x10, 'h', 'e', 'l', 'l', 'o'}
	rawABC    = []byte{0x0c, 0x08, 'a', 'b', 'c', 0x15, 0x03}
	xerialHdr = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0x00, 0, 0, 0, 1, 0, 0, 0, 1}
)

func chunk(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestXerialVectors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"raw", rawHello, "hello"},
		{"raw copy", rawABC, "abcabcabcabc"},
		{"framed one chunk", cat(xerialHdr, chunk(rawHello)), "hello"},
		{"framed two chunks", cat(xerialHdr, chunk(rawHello), chunk(rawABC)), "helloabcabcabcabc"},
		{"framed no chunk", xerialHdr, ""},
		// snappy-java only checks the magic; other version numbers decode.
		{"framed other versions", cat(xerialHdr[:8], []byte{0, 0, 0, 2, 0, 0, 0, 1}, chunk(rawABC)), "abcabcabcabc"},
	} {
		got, err := DecodeLimit([]byte("x"), tc.in, 0)
		if err != nil || string(got) != "x"+tc.want {
			t.Errorf("%s: got %q, %v", tc.name, got, err)
		}
	}
}

func TestXerialEncodeLayout(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789"), 7000) // 70000 bytes: 3 chunks
	out, err := (&Codec{}).Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out[:16], xerialHdr) {
		t.Fatalf("header % x", out[:16])
	}
	rest, chunks := out[16:], 0
	var total int
	for len(rest) > 0 {
		n := binary.BigEndian.Uint32(rest)
		block := rest[4 : 4+n]
		dl, _, err := decodedLenForTest(block)
		if err != nil || dl > xerialBlockSize {
			t.Fatalf("chunk %d: decoded length %d, %v", chunks, dl, err)
		}
		total += dl
		rest = rest[4+n:]
		chunks++
	}
	if chunks != 3 || total != len(src) {
		t.Fatalf("%d chunks, %d bytes", chunks, total)
	}
	raw, _ := (&Codec{Framing: Unframed}).Encode(nil, src)
	if bytes.HasPrefix(raw, xerialHdr[:8]) {
		t.Fatal("unframed output has the xerial magic")
	}
	for _, in := range [][]byte{out, raw} {
		if got, err := DecodeLimit(nil, in, 0); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("round trip: %v", err)
		}
	}
}

func decodedLenForTest(b []byte) (int, int, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, ErrCorrupt
	}
	return int(v), n, nil
}

func TestXerialCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"short header", xerialHdr[:12], ErrCorrupt},
		{"chunk size cut", cat(xerialHdr, []byte{0, 0}), ErrCorrupt},
		{"chunk past end", cat(xerialHdr, []byte{0x7f, 0xff, 0xff, 0xff}, rawHello), ErrCorrupt},
		{"bad block", cat(xerialHdr, chunk([]byte{0x05, 0x10, 'h'})), ErrCorrupt},
		// A 4-byte block claiming 2 GiB is refused before any allocation.
		{"implausible length", []byte{0xff, 0xff, 0xff, 0x07}, ErrCorrupt},
		{"over limit", rawABC, limit.ErrTooLarge},
	} {
		_, err := DecodeLimit(nil, tc.in, 10)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}
