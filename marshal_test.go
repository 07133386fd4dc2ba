package kafka

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

type recordMarshalInner struct {
	Name  string
	Items []int16
}

type recordMarshalAll struct {
	A        int8
	B        int16
	C        int32
	D        int64
	E        bool
	F        float64
	S        string
	N        string `kafka:"nullable"`
	Bs       []byte
	NB       []byte `kafka:"nullable,compact"`
	Arr      []int32
	NArr     []string `kafka:"nullable"`
	Inner    recordMarshalInner
	Versions int32    `kafka:"min=v1,max=v2"`
	Skip     int32    `kafka:"-"`
	Tagged   int32    `kafka:"tag=0"`
	Old      int32    `kafka:"min=v0,max=v1|nullable"`
	_        struct{} `kafka:"min=v0,max=v9"`
	hidden   int32
}

func TestRecordMarshalBytes(t *testing.T) {
	v := recordMarshalAll{
		A: -1, B: 0x0102, C: 0x03040506, D: -2, E: true, F: 1.5,
		S: "", N: "", Bs: nil, NB: nil, Arr: []int32{7}, NArr: []string{"", "x"},
		Inner:    recordMarshalInner{Name: "in", Items: []int16{-1}},
		Versions: 9, Skip: 9, Tagged: 9, Old: 0x0a0b0c0d, hidden: 9,
	}
	want := []byte{
		0xff,       // A
		0x01, 0x02, // B
		0x03, 0x04, 0x05, 0x06, // C
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, // D
		0x01,                                           // E
		0x3f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // F
		0x00, 0x00, // S: empty
		0xff, 0xff, // N: null
		0x00, 0x00, 0x00, 0x00, // Bs: nil, not nullable: empty
		0xff, 0xff, 0xff, 0xff, // NB: null
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, // Arr
		0x00, 0x00, 0x00, 0x02, 0xff, 0xff, 0x00, 0x01, 'x', // NArr: its strings are nullable too
		0x00, 0x02, 'i', 'n', 0x00, 0x00, 0x00, 0x01, 0xff, 0xff, // Inner
		0x0a, 0x0b, 0x0c, 0x0d, // Old, by its unversioned alternative
	}
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal =\n% x\nwant\n% x", got, want)
	}
	if p, err := Marshal(&v); err != nil || !bytes.Equal(p, want) {
		t.Errorf("Marshal of a pointer = % x, %v", p, err)
	}

	var back recordMarshalAll
	if err := Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	v.Bs = []byte{} // decoded as present and empty
	v.Versions, v.Skip, v.Tagged, v.hidden = 0, 0, 0, 0
	if !reflect.DeepEqual(back, v) {
		t.Errorf("Unmarshal =\n%+v\nwant\n%+v", back, v)
	}
}

func TestRecordMarshalTopLevel(t *testing.T) {
	for _, tc := range []struct {
		v    interface{}
		want []byte
	}{
		{"", []byte{0xff, 0xff}},
		{"ab", []byte{0, 2, 'a', 'b'}},
		{[]byte(nil), []byte{0xff, 0xff, 0xff, 0xff}},
		{[]int8(nil), []byte{0xff, 0xff, 0xff, 0xff}},
		{[]int8{}, []byte{0, 0, 0, 0}},
		{int32(-2), []byte{0xff, 0xff, 0xff, 0xfe}},
		{false, []byte{0}},
		{struct{}{}, []byte{}},
	} {
		got, err := Marshal(tc.v)
		if err != nil || !bytes.Equal(got, tc.want) || got == nil {
			t.Errorf("Marshal(%#v) = % x, %v; want % x", tc.v, got, err, tc.want)
		}
	}
	var s string
	if err := Unmarshal([]byte{0xff, 0xff}, &s); err != nil || s != "" {
		t.Errorf("Unmarshal of a null string = %q, %v", s, err)
	}
	// Bytes past the value are ignored.
	var n int16
	if err := Unmarshal([]byte{0, 5, 9, 9}, &n); err != nil || n != 5 {
		t.Errorf("Unmarshal int16 = %d, %v", n, err)
	}
}

type recordMarshalTree struct {
	Value    int8
	Children []recordMarshalTree
}

// recordMarshalSelf encodes itself as its length then its text.
type recordMarshalSelf struct{ text string }

func (s *recordMarshalSelf) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(append([]byte{byte(len(s.text))}, s.text...))
	return int64(n), err
}

func (s *recordMarshalSelf) ReadFrom(r io.Reader) (int64, error) {
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return 0, err
	}
	b := make([]byte, n[0])
	if _, err := io.ReadFull(r, b); err != nil {
		return 1, err
	}
	s.text = string(b)
	return 1 + int64(n[0]), nil
}

type recordMarshalWithSelf struct {
	Before int8
	Self   recordMarshalSelf
	Many   []recordMarshalSelf
	After  int8
}

func TestRecordMarshalRoundTrips(t *testing.T) {
	// A nil slice in a field without "nullable" encodes as empty.
	leaf := []recordMarshalTree{}
	tree := recordMarshalTree{Value: 1, Children: []recordMarshalTree{{Value: 2, Children: leaf}, {Value: 3, Children: []recordMarshalTree{{Value: 4, Children: leaf}}}}}
	b, err := Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	var tree2 recordMarshalTree
	if err := Unmarshal(b, &tree2); err != nil || !reflect.DeepEqual(tree, tree2) {
		t.Errorf("recursive type: %+v, %v", tree2, err)
	}

	ws := recordMarshalWithSelf{Before: 1, Self: recordMarshalSelf{"abc"}, Many: []recordMarshalSelf{{"x"}, {""}}, After: 2}
	b, err = Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{1, 3, 'a', 'b', 'c', 0, 0, 0, 2, 1, 'x', 0, 2}; !bytes.Equal(b, want) {
		t.Errorf("Marshal with WriterTo fields = % x; want % x", b, want)
	}
	var ws2 recordMarshalWithSelf
	if err := Unmarshal(b, &ws2); err != nil || !reflect.DeepEqual(ws, ws2) {
		t.Errorf("Unmarshal with ReaderFrom fields = %+v, %v", ws2, err)
	}
}

func TestRecordMarshalErrors(t *testing.T) {
	for _, v := range []interface{}{nil, 1, uint32(1), float32(1), map[string]int{}, struct{ X int }{}, (*int32)(nil),
		struct {
			X int32 `kafka:"min=v1"`
		}{},
		struct {
			X int32 `kafka:"bogus"`
		}{},
	} {
		if b, err := Marshal(v); err == nil {
			t.Errorf("Marshal(%#v) = % x; want an error", v, b)
		}
	}
	if _, err := Marshal(strings.Repeat("x", 1<<15)); err == nil {
		t.Error("Marshal of a string too long for an int16 length succeeded")
	}
	var x int32
	if err := Unmarshal([]byte{0, 0, 0, 1}, x); err == nil {
		t.Error("Unmarshal into a non-pointer succeeded")
	}
	if err := Unmarshal([]byte{0, 1}, &x); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Unmarshal of a short int32: %v", err)
	}
	var s []int64
	if err := Unmarshal([]byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1}, &s); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Unmarshal of an array announcing 2^31 elements: %v", err)
	}
	var e []struct{}
	if err := Unmarshal([]byte{0x7f, 0xff, 0xff, 0xff}, &e); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Unmarshal of 2^31 empty structs: %v", err)
	}
	var str string
	if err := Unmarshal([]byte{0, 9, 'a'}, &str); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Unmarshal of a cut string: %v", err)
	}
}

func TestRecordMarshalHostileInput(t *testing.T) {
	good, err := Marshal(recordMarshalAll{Arr: []int32{1, 2}, NArr: []string{"a"}, Inner: recordMarshalInner{Items: []int16{1}}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 2000; i++ {
		b := append([]byte(nil), good...)
		for j := 0; j < 1+rng.Intn(3); j++ {
			b[rng.Intn(len(b))] = byte(rng.Intn(256))
		}
		b = b[:rng.Intn(len(b)+1)]
		var v recordMarshalAll
		_ = Unmarshal(b, &v) // must not panic
		var tree recordMarshalTree
		_ = Unmarshal(b, &tree)
	}
}

type recordMarshalVersioned struct {
	A int32  `kafka:"min=v0,max=v2"`
	B string `kafka:"min=v1,max=v3,nullable"`
	C int8   `kafka:"min=v0,max=v0|min=v2,max=v5"`
	D int16
	E []string `kafka:"min=v3,max=v3"`
}

// The version-aware encoding kafka-go's Version.Marshal does, kept ready
// for a Version type (the package's Version constant holds the name).
func TestRecordMarshalVersions(t *testing.T) {
	v := recordMarshalVersioned{A: 1, C: 3, D: 4}
	for _, tc := range []struct {
		version int16
		want    []byte
	}{
		{-1, []byte{0, 4}},                     // D only: no tag, no version
		{0, []byte{0, 0, 0, 1, 3}},             // A, C
		{1, []byte{0, 0, 0, 1, 0xff, 0xff}},    // A, B (null)
		{2, []byte{0, 0, 0, 1, 0xff, 0xff, 3}}, // A, B, C
		{3, []byte{0xff, 0xff, 3, 0, 0, 0, 0}}, // B, C, E (not nullable: empty)
		{9, []byte{}},                          // nothing
	} {
		got, err := Version(tc.version).Marshal(v)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("v%d: % x, %v; want % x", tc.version, got, err, tc.want)
			continue
		}
		var back recordMarshalVersioned
		if err := Version(tc.version).Unmarshal(got, &back); err != nil {
			t.Errorf("v%d: Unmarshal: %v", tc.version, err)
		}
		if again, _ := Version(tc.version).Marshal(back); !bytes.Equal(again, got) {
			t.Errorf("v%d: decoded %+v encodes as % x", tc.version, back, again)
		}
	}
}
