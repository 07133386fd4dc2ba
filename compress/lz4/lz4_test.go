package lz4

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/rackfetch/kafka-go/compress/internal/limit"
)

func sample() []byte {
	rnd := rand.New(rand.NewSource(3))
	b := bytes.Repeat([]byte("lz4 frames for kafka "), 30000)
	rnd.Read(b[100000:150000])
	return b
}

// Frames written by pierrec/lz4 with every option Kafka producers use
// decode with DecodeLimit.
func TestDecodeForeignFrames(t *testing.T) {
	src := sample()
	for _, opts := range [][]lz4.Option{
		{},
		{lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)},
		{lz4.BlockSizeOption(lz4.Block256Kb), lz4.BlockChecksumOption(true)},
		{lz4.BlockSizeOption(lz4.Block1Mb), lz4.SizeOption(uint64(len(src)))},
		{lz4.CompressionLevelOption(lz4.Level9)},
	} {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(opts...); err != nil {
			t.Fatal(err)
		}
		w.Write(src)
		w.Close()
		got, err := DecodeLimit(nil, buf.Bytes(), 0)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%v: %v", opts, err)
		}
	}
}

// Encode's frames pass pierrec/lz4's reader, which checks the header
// checksum.
func TestEncodeReadByPierrec(t *testing.T) {
	src := sample()
	enc, err := (&Codec{}).Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(enc)))
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("%v", err)
	}
}

func TestLinkedBlocksAndBadHeaderChecksum(t *testing.T) {
	frame := []byte{0x04, 0x22, 0x4d, 0x18,
		0x40, 0x40, // version 1, dependent blocks; 64 KiB
		0x00, // wrong header checksum, as Kafka 0.8/0.9 wrote it
		16, 0, 0, 0x80}
	frame = append(frame, "0123456789abcdef"...)
	// Block 2: a match of 8 bytes at distance 16 (into block 1), then the
	// 5 final literals.
	frame = append(frame, 9, 0, 0, 0, 0x04, 16, 0, 0x50, 'v', 'w', 'x', 'y', 'z')
	frame = append(frame, 0, 0, 0, 0)
	got, err := DecodeLimit(nil, frame, 0)
	if err != nil || string(got) != "0123456789abcdef01234567vwxyz" {
		t.Fatalf("%q %v", got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	enc, _ := (&Codec{}).Encode(nil, sample())
	if _, err := DecodeLimit(nil, enc, 1000); !errors.Is(err, limit.ErrTooLarge) {
		t.Fatalf("limit: %v", err)
	}
	sized := []byte{0x04, 0x22, 0x4d, 0x18, 0x68, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x10, 0} // claims 2^52
	if _, err := DecodeLimit(nil, sized, 0); !errors.Is(err, limit.ErrTooLarge) {
		t.Fatalf("content size: %v", err)
	}
	for cut := 0; cut < len(enc); cut += 97 {
		if _, err := DecodeLimit(nil, enc[:cut], 0); err == nil && cut > 0 {
			t.Fatalf("cut at %d: no error", cut)
		}
	}
}
