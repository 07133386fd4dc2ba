package zstd

import (
	"bytes"
	"errors"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/rackfetch/kafka-go/compress/internal/limit"
)

func TestFramesWithoutContentSize(t *testing.T) {
	src := bytes.Repeat([]byte("zstd without a declared size "), 20000)
	var buf bytes.Buffer
	w := (&Codec{Level: 19}).NewWriter(&buf)
	w.Write(src)
	w.Close()
	var h zstd.Header
	if h.Decode(buf.Bytes()); h.HasFCS {
		t.Fatal("expected a frame without content size")
	}
	// Whatever spare capacity dst has, the output is the same.
	for _, dst := range [][]byte{nil, make([]byte, 3, 10), make([]byte, 1, len(src)+100)} {
		got, err := DecodeLimit(dst, buf.Bytes(), 0)
		if err != nil || !bytes.Equal(got[len(dst):], src) || !bytes.Equal(got[:len(dst)], dst) {
			t.Fatalf("cap %d: %v", cap(dst), err)
		}
	}
	if _, err := DecodeLimit(nil, buf.Bytes(), len(src)-1); !errors.Is(err, limit.ErrTooLarge) {
		t.Fatalf("limit: %v", err)
	}
	if got, err := DecodeLimit(nil, buf.Bytes(), len(src)); err != nil || len(got) != len(src) {
		t.Fatalf("exact limit: %v", err)
	}
}

func TestConcatenatedFrames(t *testing.T) {
	c := &Codec{}
	a, _ := c.Encode(nil, []byte("first frame "))
	b, _ := c.Encode(a, bytes.Repeat([]byte("second "), 1000))
	got, err := DecodeLimit(nil, b, 0)
	if err != nil || !bytes.Equal(got, append([]byte("first frame "), bytes.Repeat([]byte("second "), 1000)...)) {
		t.Fatalf("%v", err)
	}
}

func TestCorrupt(t *testing.T) {
	enc, _ := (&Codec{}).Encode(nil, bytes.Repeat([]byte("abc"), 1000))
	// Single segment, 8-byte content size of 1 GiB, then one empty last raw
	// block: 16 bytes cannot produce 1 GiB.
	big := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0x01, 0, 0}
	if _, err := DecodeLimit(nil, big, 1<<30+1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("implausible size: %v", err)
	}
	if _, err := DecodeLimit(nil, big, 0); !errors.Is(err, limit.ErrTooLarge) {
		t.Fatalf("size over the limit: %v", err)
	}
	if _, err := DecodeLimit(nil, []byte{1, 2, 3, 4, 5, 6}, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("garbage: %v", err)
	}
	for cut := 1; cut < len(enc); cut += 3 {
		if _, err := DecodeLimit(nil, enc[:cut], 0); err == nil {
			t.Fatalf("cut at %d: no error", cut)
		}
	}
}
