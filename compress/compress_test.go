package compress_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"runtime"
	"testing"

	"github.com/rackfetch/kafka-go/compress"
)

var codes = []compress.Compression{compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}

func payloads() map[string][]byte {
	rnd := rand.New(rand.NewSource(1))
	random := make([]byte, 200<<10)
	rnd.Read(random)
	text := bytes.Repeat([]byte("kafka records compress well, mostly. "), 10000)
	mixed := append(append([]byte{}, random[:70<<10]...), text...)
	return map[string][]byte{
		"empty":  {},
		"byte":   {42},
		"small":  []byte("hello, kafka"),
		"random": random,
		"text":   text,
		"mixed":  mixed,
	}
}

func TestRoundTrip(t *testing.T) {
	for _, c := range codes {
		for name, p := range payloads() {
			enc, err := c.Encode([]byte("prefix"), p)
			if err != nil {
				t.Fatalf("%s/%s: encode: %v", c, name, err)
			}
			if !bytes.HasPrefix(enc, []byte("prefix")) {
				t.Fatalf("%s/%s: encode lost dst", c, name)
			}
			dec, err := c.Decode([]byte("keep"), enc[6:])
			if err != nil {
				t.Fatalf("%s/%s: decode: %v", c, name, err)
			}
			if string(dec[:4]) != "keep" || !bytes.Equal(dec[4:], p) {
				t.Fatalf("%s/%s: round trip mismatch (%d vs %d bytes)", c, name, len(dec)-4, len(p))
			}

			// The streaming API reads what Encode writes and vice versa.
			r := c.Codec().NewReader(bytes.NewReader(enc[6:]))
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, p) {
				t.Fatalf("%s/%s: NewReader: %v (%d vs %d bytes)", c, name, err, len(got), len(p))
			}
			var buf bytes.Buffer
			w := c.Codec().NewWriter(&buf)
			if _, err := w.Write(p); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			dec, err = c.DecodeLimit(nil, buf.Bytes(), len(p)+1)
			if err != nil || !bytes.Equal(dec, p) {
				t.Fatalf("%s/%s: NewWriter output: %v", c, name, err)
			}
		}
	}
}

func TestNone(t *testing.T) {
	out, err := compress.None.Encode([]byte("a"), []byte("bc"))
	if err != nil || string(out) != "abc" {
		t.Fatalf("%q %v", out, err)
	}
	if _, err := compress.None.DecodeLimit(nil, make([]byte, 10), 5); !errors.Is(err, compress.ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	if _, err := compress.Compression(7).Decode(nil, nil); err == nil {
		t.Fatal("expected an error for code 7")
	}
}

func TestNames(t *testing.T) {
	for c, want := range map[compress.Compression]string{
		compress.None: "uncompressed", compress.Gzip: "gzip", compress.Snappy: "snappy",
		compress.Lz4: "lz4", compress.Zstd: "zstd",
	} {
		if c.String() != want {
			t.Errorf("%d: %q", c, c.String())
		}
		var back compress.Compression
		if err := back.UnmarshalText([]byte(want)); err != nil || back != c {
			t.Errorf("%q: %v %v", want, back, err)
		}
		if codec := c.Codec(); codec != nil && compress.Compression(codec.Code()) != c {
			t.Errorf("%s: code %d", c, codec.Code())
		}
	}
	var c compress.Compression
	if err := c.UnmarshalText([]byte("brotli")); err == nil {
		t.Error("expected an error for brotli")
	}
}

// TestBomb decompresses 64 MiB of zeros under a 1 MiB limit: every codec
// must refuse it without producing (or allocating) the whole output.
func TestBomb(t *testing.T) {
	zeros := make([]byte, 64<<20)
	for _, c := range codes {
		enc, err := c.Encode(nil, zeros)
		if err != nil {
			t.Fatal(err)
		}
		// Streamed forms too: the zstd writer declares no content size.
		var buf bytes.Buffer
		w := c.Codec().NewWriter(&buf)
		w.Write(zeros)
		w.Close()
		for i, src := range [][]byte{enc, buf.Bytes()} {
			// Warm the pooled decoders: a zstd stream decoder keeps its
			// window (8 MiB here) from one use to the next.
			c.DecodeLimit(nil, src, 1<<20)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = c.DecodeLimit(nil, src, 1<<20)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, compress.ErrTooLarge) {
				t.Fatalf("%s #%d (%d bytes): got %v, want ErrTooLarge", c, i, len(src), err)
			}
			n := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s #%d: %d bytes in, %d bytes allocated", c, i, len(src), n)
			if n > 8<<20 && !raceEnabled {
				t.Fatalf("%s #%d: decoding a bomb allocated %d bytes", c, i, n)
			}
		}
	}
}

func TestCorrupt(t *testing.T) {
	rnd := rand.New(rand.NewSource(2))
	text := bytes.Repeat([]byte("corruption "), 5000)
	for _, c := range codes {
		enc, _ := c.Encode(nil, text)
		for i := 0; i < 300; i++ {
			bad := append([]byte{}, enc...)
			switch i % 3 {
			case 0:
				bad[rnd.Intn(len(bad))] ^= byte(1 + rnd.Intn(255))
			case 1:
				bad = bad[:rnd.Intn(len(bad))]
			default:
				rnd.Read(bad[rnd.Intn(len(bad)):])
			}
			// Any result but a panic or a huge output is fine.
			out, _ := c.DecodeLimit(nil, bad, 1<<20)
			if len(out) > 1<<20+(256<<10) {
				t.Fatalf("%s: %d bytes out of corrupt input", c, len(out))
			}
		}
	}
}

// A codec without the whole-buffer paths goes through its reader and writer.
type streamOnly struct{ compress.Codec }

func TestStreamFallback(t *testing.T) {
	c := streamOnly{compress.Codecs[compress.Gzip]}
	src := bytes.Repeat([]byte("x"), 10000)
	enc, err := compress.Encode(c, nil, src)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := compress.DecodeLimit(c, nil, enc, 0)
	if err != nil || !bytes.Equal(dec, src) {
		t.Fatalf("%v", err)
	}
	if _, err := compress.DecodeLimit(c, nil, enc, 100); !errors.Is(err, compress.ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkDecode(b *testing.B) {
	src := bytes.Repeat([]byte("kafka records compress well, mostly. "), 300)
	for _, c := range codes {
		enc, _ := c.Encode(nil, src)
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			var dst []byte
			for i := 0; i < b.N; i++ {
				var err error
				if dst, err = c.Decode(dst[:0], enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The global codecs are shared: pooled state must not leak between
// goroutines.
func TestConcurrentUse(t *testing.T) {
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func(g int) {
			var err error
			for i := 0; i < 50 && err == nil; i++ {
				c := codes[(g+i)%len(codes)]
				src := bytes.Repeat([]byte{byte(g), byte(i)}, 1000+g*100+i)
				var enc, dec []byte
				if enc, err = c.Encode(nil, src); err != nil {
					break
				}
				if dec, err = c.Decode(nil, enc); err == nil && !bytes.Equal(dec, src) {
					err = errors.New(c.String() + ": mismatch")
				}
			}
			done <- err
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
