package protocol

import (
	"encoding/binary"
	"math"
)

// Encoder appends Kafka primitives to B. Flexible selects the compact forms
// (KIP-482) used by flexible message versions.
type Encoder struct {
	B        []byte
	Flexible bool
}

func (e *Encoder) Bool(v bool) {
	if v {
		e.B = append(e.B, 1)
	} else {
		e.B = append(e.B, 0)
	}
}

func (e *Encoder) Int8(v int8)   { e.B = append(e.B, byte(v)) }
func (e *Encoder) Int16(v int16) { e.B = binary.BigEndian.AppendUint16(e.B, uint16(v)) }
func (e *Encoder) Int32(v int32) { e.B = binary.BigEndian.AppendUint32(e.B, uint32(v)) }
func (e *Encoder) Int64(v int64) { e.B = binary.BigEndian.AppendUint64(e.B, uint64(v)) }
func (e *Encoder) Uint32(v uint32) {
	e.B = binary.BigEndian.AppendUint32(e.B, v)
}
func (e *Encoder) Float64(v float64) { e.Int64(int64(math.Float64bits(v))) }

// Varint writes a zig-zag encoded signed varint (used in records).
func (e *Encoder) Varint(v int64) { e.B = binary.AppendVarint(e.B, v) }

// Uvarint writes an unsigned varint (used by compact lengths and tags).
func (e *Encoder) Uvarint(v uint64) { e.B = binary.AppendUvarint(e.B, v) }

// UUID writes 16 raw bytes.
func (e *Encoder) UUID(v [16]byte) { e.B = append(e.B, v[:]...) }

// length writes a length in the form of the current version: int16/int32
// for classic versions (wide selects int32), uvarint(n+1) for flexible ones,
// where -1 means null.
func (e *Encoder) length(n int, wide bool) {
	switch {
	case e.Flexible:
		e.Uvarint(uint64(n + 1))
	case wide:
		e.Int32(int32(n))
	default:
		e.Int16(int16(n))
	}
}

func (e *Encoder) String(s string) {
	e.length(len(s), false)
	e.B = append(e.B, s...)
}

func (e *Encoder) NullableString(s *string) {
	if s == nil {
		e.length(-1, false)
		return
	}
	e.String(*s)
}

// Bytes writes a byte array; nil is written as null.
func (e *Encoder) Bytes(b []byte) {
	if b == nil {
		e.length(-1, true)
		return
	}
	e.length(len(b), true)
	e.B = append(e.B, b...)
}

// ArrayLen writes an array length; -1 writes a null array.
func (e *Encoder) ArrayLen(n int) { e.length(n, true) }

// lenOrNull returns len(s), or -1 for a nil s: the ArrayLen of a nullable
// array.
func lenOrNull[T any](s []T) int {
	if s == nil {
		return -1
	}
	return len(s)
}

// Int32Array writes an int32 array; nil is written as an empty array.
func (e *Encoder) Int32Array(s []int32) { encodeArray(e, s, false, e.Int32) }

// NullableInt32Array writes an int32 array; nil is written as null.
func (e *Encoder) NullableInt32Array(s []int32) { encodeArray(e, s, true, e.Int32) }

// StringArray writes a string array; nil is written as an empty array.
func (e *Encoder) StringArray(s []string) { encodeArray(e, s, false, e.String) }

// NullableStringArray writes a string array; nil is written as null.
func (e *Encoder) NullableStringArray(s []string) { encodeArray(e, s, true, e.String) }

func encodeArray[T any](e *Encoder, s []T, nullable bool, put func(T)) {
	if nullable {
		e.ArrayLen(lenOrNull(s))
	} else {
		e.ArrayLen(len(s))
	}
	for _, x := range s {
		put(x)
	}
}

// NullableName writes a topic name in a version where it is nullable:
// topic names are never empty, so "" is written as null.
func (e *Encoder) NullableName(name string) {
	if name == "" {
		e.NullableString(nil)
		return
	}
	e.String(name)
}

// NonNullBytes writes a bytes field that is not nullable: nil is written
// as empty, since brokers reject a null there.
func (e *Encoder) NonNullBytes(b []byte) {
	if b == nil {
		b = []byte{}
	}
	e.Bytes(b)
}

// Tags writes an empty tagged-field section on flexible versions.
func (e *Encoder) Tags() {
	if e.Flexible {
		e.B = append(e.B, 0)
	}
}

// TagsWith writes a tagged-field section holding the given fields, which
// must be in ascending tag order. Nil values are omitted.
func (e *Encoder) TagsWith(fields ...TaggedField) {
	if !e.Flexible {
		return
	}
	n := 0
	for _, f := range fields {
		if f.Value != nil {
			n++
		}
	}
	e.Uvarint(uint64(n))
	for _, f := range fields {
		if f.Value == nil {
			continue
		}
		e.Uvarint(uint64(f.Tag))
		e.Uvarint(uint64(len(f.Value)))
		e.B = append(e.B, f.Value...)
	}
}

// taggedValue returns what build writes in flexible form: the value of one
// tagged field. It is never nil, since an empty value is still present.
func taggedValue(build func(t *Encoder)) []byte {
	t := Encoder{Flexible: true}
	build(&t)
	if t.B == nil {
		t.B = []byte{}
	}
	return t.B
}

// TaggedField is one raw tagged field of a flexible message.
type TaggedField struct {
	Tag   uint32
	Value []byte
}

// BeginSize reserves 4 bytes for an int32 size to be filled by EndSize.
func (e *Encoder) BeginSize() int {
	e.B = append(e.B, 0, 0, 0, 0)
	return len(e.B)
}

// EndSize writes the number of bytes appended since BeginSize.
func (e *Encoder) EndSize(start int) {
	binary.BigEndian.PutUint32(e.B[start-4:], uint32(len(e.B)-start))
}
