package protocol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"
)

// Helpers shared by the message tests.

func strp(s string) *string { return &s }

// Topic ids used by the tests.
var (
	testTopicID  = [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	testTopicID2 = [16]byte{15: 1}
)

// wire lays out bytes by hand, independently of Encoder, to write test
// vectors from the Kafka spec: int8, int16, int32 and int64 are written
// big-endian, a byte (uint8) as itself, a string as its raw characters
// (lengths are written by the caller), []byte and [16]byte as they are.
func wire(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch x := p.(type) {
		case int8:
			b = append(b, byte(x))
		case byte:
			b = append(b, x)
		case int16:
			b = binary.BigEndian.AppendUint16(b, uint16(x))
		case int32:
			b = binary.BigEndian.AppendUint32(b, uint32(x))
		case int64:
			b = binary.BigEndian.AppendUint64(b, uint64(x))
		case string:
			b = append(b, x...)
		case []byte:
			b = append(b, x...)
		case [16]byte:
			b = append(b, x[:]...)
		default:
			panic(fmt.Sprintf("wire: unsupported %T", p))
		}
	}
	return b
}

// encoded returns m encoded at version v.
func encoded(m Message, v int16, flexible bool) []byte {
	e := Encoder{Flexible: flexible}
	m.Encode(&e, v)
	return e.B
}

// checkBytes checks that want encodes to exactly b at version v and that b
// decodes back to it (see checkDecode).
func checkBytes(t *testing.T, b []byte, v int16, flexible bool, want Message) Message {
	t.Helper()
	if got := encoded(want, v, flexible); !bytes.Equal(got, b) {
		t.Errorf("%T v%d encoding:\nwant % x\n got % x", want, v, b, got)
	}
	return checkDecode(t, b, v, flexible, want)
}

// checkDecode checks that b decodes at version v, using every byte, into a
// value equal to want, which it returns.
func checkDecode(t *testing.T, b []byte, v int16, flexible bool, want Message) Message {
	t.Helper()
	got := reflect.New(reflect.TypeOf(want).Elem()).Interface().(Message)
	d := NewDecoder(b, flexible)
	if err := got.Decode(d, v); err != nil {
		t.Fatalf("%T v%d decoding: %v", got, v, err)
	}
	if d.Remaining() != 0 {
		t.Fatalf("%T v%d: %d bytes left after decoding", got, v, d.Remaining())
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%T v%d decoding:\nwant %+v\n got %+v", got, v, want, got)
	}
	return got
}

// sample builds golden values of a request and its response at a version,
// for the round-trip tests and as fuzz seeds.
type sample struct {
	name   string
	newReq func() Request
	build  func(v int16) (Request, Response)
}

// fuzzReencode decodes data as a fresh message from newMsg at version v.
// Whatever decodes must encode and decode again to the same value.
func fuzzReencode(t *testing.T, data []byte, v int16, flexible bool, newMsg func() Message) {
	t.Helper()
	m := newMsg()
	if m.Decode(NewDecoder(data, flexible), v) != nil {
		return
	}
	checkDecode(t, encoded(m, v, flexible), v, flexible, m)
}

// seedSamples adds to f every sample's response, and with requests set its
// request, encoded at every version.
func seedSamples(f *testing.F, samples []sample, requests bool) {
	for _, s := range samples {
		proto := s.newReq()
		for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
			req, resp := s.build(v)
			f.Add(encoded(resp, v, IsFlexible(proto, v)))
			if requests {
				f.Add(encoded(req, v, IsFlexible(proto, v)))
			}
		}
	}
}

// fuzzSamples runs fuzzReencode on data as every sample's response, and
// with requests set its request, at every version.
func fuzzSamples(t *testing.T, data []byte, samples []sample, requests bool) {
	for _, s := range samples {
		proto := s.newReq()
		for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
			flexible := IsFlexible(proto, v)
			fuzzReencode(t, data, v, flexible, func() Message { return proto.NewResponse() })
			if requests {
				fuzzReencode(t, data, v, flexible, func() Message { return s.newReq() })
			}
		}
	}
}
