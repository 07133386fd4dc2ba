package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrTruncated is returned when a message ends before a field it declares.
var ErrTruncated = errors.New("kafka protocol: message truncated")

// ErrInvalidLength is returned for a negative or impossible length prefix.
var ErrInvalidLength = errors.New("kafka protocol: invalid length")

// Decoder reads Kafka primitives from a byte slice. The first error sticks:
// after it every read returns a zero value, so message decoders check Err
// once at the end instead of after every field. Byte slices returned by the
// decoder alias the input.
type Decoder struct {
	b        []byte
	off      int
	err      error
	Flexible bool
}

// NewDecoder returns a decoder over b.
func NewDecoder(b []byte, flexible bool) *Decoder {
	return &Decoder{b: b, Flexible: flexible}
}

// Reset points the decoder at b, clearing any error.
func (d *Decoder) Reset(b []byte, flexible bool) {
	*d = Decoder{b: b, Flexible: flexible}
}

func (d *Decoder) Err() error     { return d.err }
func (d *Decoder) Remaining() int { return len(d.b) - d.off }
func (d *Decoder) Offset() int    { return d.off }

// Fail records err unless an error is already recorded.
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// Failf records a formatted error naming what was being decoded.
func (d *Decoder) Failf(format string, args ...any) {
	d.Fail(fmt.Errorf("kafka protocol: "+format, args...))
}

func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 {
		d.err = ErrInvalidLength
		return nil
	}
	if n > len(d.b)-d.off {
		d.err = ErrTruncated
		return nil
	}
	s := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return s
}

func (d *Decoder) Bool() bool { return d.Int8() != 0 }

func (d *Decoder) Int8() int8 {
	if b := d.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (d *Decoder) Int16() int16 {
	if b := d.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (d *Decoder) Int32() int32 {
	if b := d.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (d *Decoder) Uint32() uint32 { return uint32(d.Int32()) }

func (d *Decoder) Int64() int64 {
	if b := d.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (d *Decoder) Float64() float64 { return math.Float64frombits(uint64(d.Int64())) }

func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if !d.skipVarint(n) {
		return 0
	}
	return v
}

// skipVarint moves past a varint of n bytes, n as binary.Varint and
// binary.Uvarint report it: 0 when the input ends inside the varint,
// negative when it overflows 64 bits.
func (d *Decoder) skipVarint(n int) bool {
	switch {
	case n > 0:
		d.off += n
		return true
	case n == 0:
		d.err = ErrTruncated
	default:
		d.err = ErrInvalidLength
	}
	return false
}

func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if !d.skipVarint(n) {
		return 0
	}
	return v
}

func (d *Decoder) UUID() (u [16]byte) {
	copy(u[:], d.take(16))
	return u
}

// length reads a length prefix in the current form and returns -1 for null.
// A length larger than the remaining input is an error, so no caller ever
// allocates by an untrusted size.
func (d *Decoder) length(wide bool) int {
	var n int64
	switch {
	case d.Flexible:
		u := d.Uvarint()
		if u > math.MaxInt32 {
			d.Fail(ErrInvalidLength)
			return 0
		}
		n = int64(u) - 1
	case wide:
		n = int64(d.Int32())
	default:
		n = int64(d.Int16())
	}
	if d.err != nil {
		return 0
	}
	if n < -1 {
		d.Fail(ErrInvalidLength)
		return 0
	}
	if n > int64(d.Remaining()) {
		d.Fail(ErrTruncated)
		return 0
	}
	return int(n)
}

func (d *Decoder) String() string {
	n := d.length(false)
	if n <= 0 {
		return ""
	}
	return string(d.take(n))
}

func (d *Decoder) NullableString() *string {
	n := d.length(false)
	if n < 0 || d.err != nil {
		return nil
	}
	s := string(d.take(n))
	return &s
}

// Bytes reads a byte array, returning nil for null. The result aliases the
// decoder's input.
func (d *Decoder) Bytes() []byte {
	n := d.length(true)
	if n < 0 || d.err != nil {
		return nil
	}
	return d.take(n)
}

// ArrayLen reads an array length (-1 for null). Each element takes at least
// one byte, so a length above the remaining bytes is rejected: callers may
// size a slice by the result.
func (d *Decoder) ArrayLen() int { return d.length(true) }

// ArrayLenMin is ArrayLen for arrays whose elements take at least minSize
// bytes each: it rejects n*minSize > remaining. Use it for arrays of
// structs, which take far more memory than wire bytes, so that a hostile
// length cannot make decoding allocate many times the input's size.
func (d *Decoder) ArrayLenMin(minSize int) int {
	n := d.ArrayLen()
	if minSize > 1 && n > d.Remaining()/minSize {
		d.Fail(ErrTruncated)
		return 0
	}
	return n
}

// minStruct is the smallest encoding of a struct, for ArrayLenMin: fixed
// bytes of fixed-size fields, then strings (nullable or not) and arrays or
// bytes fields (nullable or not) at their shortest, empty or null. Their
// lengths take 2 and 4 bytes, or 1 in flexible versions, where the tags
// section adds 1.
func (d *Decoder) minStruct(fixed, strings, arrays int) int {
	if d.Flexible {
		return fixed + strings + arrays + 1
	}
	return fixed + 2*strings + 4*arrays
}

// when returns n if ok, else 0: the size of a field some versions lack.
func when(ok bool, n int) int {
	if ok {
		return n
	}
	return 0
}

// Int32Array reads an int32 array; null and empty arrays give nil.
func (d *Decoder) Int32Array() []int32 { return decodeArray(d, 4, d.Int32) }

// StringArray reads a string array; null and empty arrays give nil.
func (d *Decoder) StringArray() []string {
	min := 2 // an empty string's int16 length, or one byte when compact
	if d.Flexible {
		min = 1
	}
	return decodeArray(d, min, d.String)
}

func decodeArray[T any](d *Decoder, minSize int, get func() T) []T {
	n := d.ArrayLenMin(minSize)
	if n <= 0 {
		return nil
	}
	s := make([]T, n)
	for i := range s {
		s[i] = get()
	}
	return s
}

// NullableName reads a topic name in a version where it is nullable; null
// reads as "" (see Encoder.NullableName).
func (d *Decoder) NullableName() string {
	if s := d.NullableString(); s != nil {
		return *s
	}
	return ""
}

// NonNullBytes reads a bytes field that is not nullable; empty reads as
// nil, the mirror of Encoder.NonNullBytes. The result aliases the input.
func (d *Decoder) NonNullBytes() []byte {
	if b := d.Bytes(); len(b) > 0 {
		return b
	}
	return nil
}

// Raw returns the next n bytes, aliasing the input.
func (d *Decoder) Raw(n int) []byte { return d.take(n) }

// Rest returns every remaining byte.
func (d *Decoder) Rest() []byte { return d.take(d.Remaining()) }

// Tags skips a tagged-field section on flexible versions.
func (d *Decoder) Tags() { d.TagsWith(nil) }

// TagsWith reads a tagged-field section, calling fn for every field; fields
// fn does not know are skipped.
func (d *Decoder) TagsWith(fn func(tag uint32, value []byte)) {
	if !d.Flexible || d.err != nil {
		return
	}
	n := d.Uvarint()
	if n > uint64(d.Remaining()) {
		d.Fail(ErrTruncated)
		return
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		tag := d.Uvarint()
		size := d.Uvarint()
		if size > uint64(d.Remaining()) {
			d.Fail(ErrTruncated)
			return
		}
		v := d.take(int(size))
		if fn != nil && d.err == nil {
			fn(uint32(tag), v)
		}
	}
}

// taggedValue decodes b, the value of a tagged field, with fn in flexible
// form. fn gets d itself pointed at b (restored after), so that no decoder
// is allocated and any error sticks in d.
func (d *Decoder) taggedValue(b []byte, fn func(t *Decoder)) {
	outer, off, flexible := d.b, d.off, d.Flexible
	d.b, d.off, d.Flexible = b, 0, true
	fn(d)
	d.b, d.off, d.Flexible = outer, off, flexible
}
