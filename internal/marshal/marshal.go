// Package marshal is the reflection codec behind kafka.Marshal and
// kafka.Unmarshal: Kafka's binary format for user types, compiled once per
// type. Nothing on the client's request path uses it.
package marshal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Marshal encodes the fields of v that exist at version (-1: the
// unversioned ones).
func Marshal(version int16, v interface{}) ([]byte, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, errors.New("kafka.Marshal: nil pointer")
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return nil, errors.New("kafka.Marshal: nil value")
	}
	c, err := marshalCodecFor(rv.Type(), version, false)
	if err != nil {
		return nil, fmt.Errorf("kafka.Marshal: %w", err)
	}
	out, err := c.encode(nil, rv)
	if err != nil {
		return nil, fmt.Errorf("kafka.Marshal: %w", err)
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// Unmarshal decodes the fields that exist at version, as Marshal
// encodes them.
func Unmarshal(version int16, b []byte, v interface{}) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("kafka.Unmarshal: need a non-nil pointer, not %T", v)
	}
	c, err := marshalCodecFor(rv.Type().Elem(), version, true)
	if err != nil {
		return fmt.Errorf("kafka.Unmarshal: %w", err)
	}
	d := &marshalDecoder{b: b, size: len(b)}
	c.decode(d, rv.Elem())
	if d.err != nil {
		return fmt.Errorf("kafka.Unmarshal: %w", d.err)
	}
	return nil
}

var (
	marshalWriterTo   = reflect.TypeOf((*io.WriterTo)(nil)).Elem()
	marshalReaderFrom = reflect.TypeOf((*io.ReaderFrom)(nil)).Elem()
)

type marshalKind uint8

const (
	marshalBool marshalKind = iota
	marshalInt8
	marshalInt16
	marshalInt32
	marshalInt64
	marshalFloat64
	marshalString
	marshalBytes
	marshalSlice
	marshalStruct
	marshalSelf // io.WriterTo or io.ReaderFrom
)

// marshalCodec encodes or decodes one type, nullable or not.
type marshalCodec struct {
	kind     marshalKind
	typ      reflect.Type
	nullable bool
	elem     *marshalCodec // marshalSlice
	fields   []marshalField
	minSize  int // the fewest bytes a value takes, bounding decoded counts
}

type marshalField struct {
	index int
	c     *marshalCodec
}

type marshalKey struct {
	typ      reflect.Type
	version  int16
	nullable bool
	decode   bool
}

var marshalCodecs sync.Map // marshalKey -> *marshalCodec

// marshalCodecFor returns the codec of t as a top-level value (nullable).
func marshalCodecFor(t reflect.Type, version int16, decode bool) (*marshalCodec, error) {
	key := marshalKey{t, version, true, decode}
	if c, ok := marshalCodecs.Load(key); ok {
		return c.(*marshalCodec), nil
	}
	building := map[marshalKey]*marshalCodec{}
	c, err := marshalCompile(t, version, true, decode, building)
	if err != nil {
		return nil, err
	}
	marshalCodecs.Store(key, c)
	return c, nil
}

func marshalCompile(t reflect.Type, version int16, nullable, decode bool, building map[marshalKey]*marshalCodec) (*marshalCodec, error) {
	key := marshalKey{t, version, nullable, decode}
	if c := building[key]; c != nil {
		return c, nil // a recursive type: filled in by the outer call
	}
	c := &marshalCodec{typ: t, nullable: nullable}
	building[key] = c
	self := marshalWriterTo
	if decode {
		self = marshalReaderFrom
	}
	if reflect.PointerTo(t).Implements(self) {
		c.kind = marshalSelf
		return c, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		c.kind, c.minSize = marshalBool, 1
	case reflect.Int8:
		c.kind, c.minSize = marshalInt8, 1
	case reflect.Int16:
		c.kind, c.minSize = marshalInt16, 2
	case reflect.Int32:
		c.kind, c.minSize = marshalInt32, 4
	case reflect.Int64:
		c.kind, c.minSize = marshalInt64, 8
	case reflect.Float64:
		c.kind, c.minSize = marshalFloat64, 8
	case reflect.String:
		c.kind, c.minSize = marshalString, 2
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			c.kind, c.minSize = marshalBytes, 4
			break
		}
		c.kind, c.minSize = marshalSlice, 4
		// Array elements take the array's nullability, as in kafka-go.
		elem, err := marshalCompile(t.Elem(), version, nullable, decode, building)
		if err != nil {
			return nil, err
		}
		c.elem = elem
	case reflect.Struct:
		c.kind = marshalStruct
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() && f.Name != "_" {
				continue
			}
			use, fnull, err := marshalFieldTag(f, version)
			if err != nil {
				return nil, fmt.Errorf("field %s of %s: %w", f.Name, t, err)
			}
			if !use || f.Type.Size() == 0 { // struct{} markers take no bytes
				continue
			}
			fc, err := marshalCompile(f.Type, version, fnull, decode, building)
			if err != nil {
				return nil, err
			}
			c.fields = append(c.fields, marshalField{index: i, c: fc})
			c.minSize += fc.minSize
		}
	default:
		return nil, fmt.Errorf("unsupported type %s", t)
	}
	return c, nil
}

// marshalFieldTag reads a field's `kafka` tag: whether the field is encoded
// at version, and whether it is nullable. The tag holds alternatives
// separated by '|', each a list of options; the first alternative whose
// version range holds version decides (no range: version -1 only). A
// field without a tag exists at version -1 only; "-" or "" leave it out,
// and so do tagged fields (flexible messages only, never written here).
func marshalFieldTag(f reflect.StructField, version int16) (use, nullable bool, err error) {
	tag, ok := f.Tag.Lookup("kafka")
	if !ok {
		return version == -1, false, nil
	}
	if tag == "-" {
		return false, false, nil
	}
	for rest := tag; rest != ""; {
		alt, after, _ := strings.Cut(rest, "|")
		rest = after
		min, max, null, tagged := -1, -1, false, false
		for opts := alt; opts != ""; {
			opt, after, _ := strings.Cut(opts, ",")
			opts = after
			switch {
			case strings.HasPrefix(opt, "min="):
				min, err = marshalTagVersion(opt[4:])
			case strings.HasPrefix(opt, "max="):
				max, err = marshalTagVersion(opt[4:])
			case opt == "nullable":
				null = true
			case opt == "compact":
				// Only flexible messages, which Marshal never writes, use
				// compact encodings.
			case opt == "tag":
				tagged = true
			case strings.HasPrefix(opt, "tag="):
				tagged = true
				_, err = strconv.Atoi(opt[4:])
			default:
				err = fmt.Errorf("unknown option %q", opt)
			}
			if err != nil {
				return false, false, fmt.Errorf("kafka tag %q: %w", tag, err)
			}
		}
		if (min < 0) != (max < 0) || min > max {
			return false, false, fmt.Errorf("kafka tag %q: invalid version range", tag)
		}
		if min <= int(version) && int(version) <= max {
			return !tagged, null, nil
		}
	}
	return false, false, nil
}

func marshalTagVersion(s string) (int, error) {
	if !strings.HasPrefix(s, "v") {
		return 0, fmt.Errorf("invalid version %q", s)
	}
	v, err := strconv.ParseUint(s[1:], 10, 15)
	if err != nil {
		return 0, fmt.Errorf("invalid version %q", s)
	}
	return int(v), nil
}

func (c *marshalCodec) encode(b []byte, v reflect.Value) ([]byte, error) {
	switch c.kind {
	case marshalBool:
		if v.Bool() {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case marshalInt8:
		return append(b, byte(v.Int())), nil
	case marshalInt16:
		return binary.BigEndian.AppendUint16(b, uint16(v.Int())), nil
	case marshalInt32:
		return binary.BigEndian.AppendUint32(b, uint32(v.Int())), nil
	case marshalInt64:
		return binary.BigEndian.AppendUint64(b, uint64(v.Int())), nil
	case marshalFloat64:
		return binary.BigEndian.AppendUint64(b, math.Float64bits(v.Float())), nil
	case marshalString:
		s := v.String()
		if c.nullable && s == "" {
			return binary.BigEndian.AppendUint16(b, 0xffff), nil
		}
		if len(s) > math.MaxInt16 {
			return b, fmt.Errorf("string of %d bytes: longer than an int16 length allows", len(s))
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		return append(b, s...), nil
	case marshalBytes:
		if c.nullable && v.IsNil() {
			return binary.BigEndian.AppendUint32(b, math.MaxUint32), nil
		}
		if v.Len() > math.MaxInt32 {
			return b, fmt.Errorf("[]byte of %d bytes: longer than an int32 length allows", v.Len())
		}
		b = binary.BigEndian.AppendUint32(b, uint32(v.Len()))
		return append(b, v.Bytes()...), nil
	case marshalSlice:
		if c.nullable && v.IsNil() {
			return binary.BigEndian.AppendUint32(b, math.MaxUint32), nil
		}
		n := v.Len()
		if n > math.MaxInt32 {
			return b, fmt.Errorf("%s of %d elements: more than an int32 count allows", c.typ, n)
		}
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		var err error
		for i := 0; i < n && err == nil; i++ {
			b, err = c.elem.encode(b, v.Index(i))
		}
		return b, err
	case marshalStruct:
		var err error
		for i := 0; i < len(c.fields) && err == nil; i++ {
			f := &c.fields[i]
			b, err = f.c.encode(b, v.Field(f.index))
		}
		return b, err
	case marshalSelf:
		p := v
		if v.CanAddr() {
			p = v.Addr()
		} else {
			p = reflect.New(c.typ)
			p.Elem().Set(v)
		}
		buf := bytes.NewBuffer(b)
		_, err := p.Interface().(io.WriterTo).WriteTo(buf)
		return buf.Bytes(), err
	}
	return b, fmt.Errorf("unsupported type %s", c.typ)
}

// marshalDecoder reads the input of Unmarshal; the first error sticks.
type marshalDecoder struct {
	b    []byte
	size int // of the whole input
	err  error
}

func (d *marshalDecoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = fmt.Errorf("%w: %d bytes needed at offset %d of %d", io.ErrUnexpectedEOF, n, d.size-len(d.b), d.size)
		d.b = nil
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *marshalDecoder) int16() int16 {
	if s := d.take(2); s != nil {
		return int16(binary.BigEndian.Uint16(s))
	}
	return 0
}

func (d *marshalDecoder) int32() int32 {
	if s := d.take(4); s != nil {
		return int32(binary.BigEndian.Uint32(s))
	}
	return 0
}

func (d *marshalDecoder) uint64() uint64 {
	if s := d.take(8); s != nil {
		return binary.BigEndian.Uint64(s)
	}
	return 0
}

func (c *marshalCodec) decode(d *marshalDecoder, v reflect.Value) {
	if d.err != nil {
		return
	}
	switch c.kind {
	case marshalBool:
		if s := d.take(1); s != nil {
			v.SetBool(s[0] != 0)
		}
	case marshalInt8:
		if s := d.take(1); s != nil {
			v.SetInt(int64(int8(s[0])))
		}
	case marshalInt16:
		v.SetInt(int64(d.int16()))
	case marshalInt32:
		v.SetInt(int64(d.int32()))
	case marshalInt64:
		v.SetInt(int64(d.uint64()))
	case marshalFloat64:
		v.SetFloat(math.Float64frombits(d.uint64()))
	case marshalString:
		n := d.int16()
		if n < 0 {
			v.SetString("")
			return
		}
		if s := d.take(int(n)); d.err == nil {
			v.SetString(string(s))
		}
	case marshalBytes:
		n := d.int32()
		if d.err != nil {
			return
		}
		if n < 0 {
			v.SetBytes(nil)
			return
		}
		if s := d.take(int(n)); d.err == nil {
			v.SetBytes(append(make([]byte, 0, n), s...))
		}
	case marshalSlice:
		n := d.int32()
		if d.err != nil {
			return
		}
		if n < 0 {
			v.Set(reflect.Zero(c.typ))
			return
		}
		// Never allocate for more elements than the input can hold.
		if m := c.elem.minSize; (m > 0 && int64(n)*int64(m) > int64(len(d.b))) || (m == 0 && int(n) > d.size) {
			d.err = fmt.Errorf("%w: %d elements of %s announced with %d bytes left", io.ErrUnexpectedEOF, n, c.elem.typ, len(d.b))
			return
		}
		s := reflect.MakeSlice(c.typ, int(n), int(n))
		for i := 0; i < int(n) && d.err == nil; i++ {
			c.elem.decode(d, s.Index(i))
		}
		if d.err == nil {
			v.Set(s)
		}
	case marshalStruct:
		for i := range c.fields {
			f := &c.fields[i]
			f.c.decode(d, v.Field(f.index))
		}
	case marshalSelf:
		r := bytes.NewReader(d.b)
		p := v
		if v.CanAddr() {
			p = v.Addr()
		} else {
			p = reflect.New(c.typ)
		}
		if _, err := p.Interface().(io.ReaderFrom).ReadFrom(r); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			d.err = err
			return
		}
		d.b = d.b[len(d.b)-r.Len():]
		if !v.CanAddr() {
			v.Set(p.Elem())
		}
	default:
		d.err = fmt.Errorf("unsupported type %s", c.typ)
	}
}
