package kafka

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRecordBytes(t *testing.T) {
	if NewBytes(nil) != nil {
		t.Error("NewBytes(nil) is not nil")
	}
	if b, err := ReadAll(nil); b != nil || err != nil {
		t.Errorf("ReadAll(nil) = %q, %v", b, err)
	}
	empty := NewBytes([]byte{})
	if empty == nil || empty.Len() != 0 {
		t.Fatal("NewBytes of an empty slice is nil or not empty")
	}
	if b, err := ReadAll(empty); b == nil || len(b) != 0 || err != nil {
		t.Errorf("ReadAll(empty) = %#v, %v; want a non-nil empty slice", b, err)
	}

	src := []byte("hello, world")
	b := NewBytes(src)
	p := make([]byte, 5)
	if n, err := b.Read(p); n != 5 || err != nil || string(p) != "hello" || b.Len() != 7 {
		t.Fatalf("Read = %d, %v, %q, Len %d", n, err, p, b.Len())
	}
	all, err := ReadAll(b)
	if err != nil || string(all) != ", world" || b.Len() != 0 {
		t.Fatalf("ReadAll = %q, %v, Len %d", all, err, b.Len())
	}
	all[0] = 'X' // a copy
	if src[5] != ',' {
		t.Error("ReadAll returned the source slice")
	}
	if n, err := b.Read(p); n != 0 || err != io.EOF {
		t.Errorf("Read at the end = %d, %v", n, err)
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}

	// The extras a bytes.Reader has.
	s := b.(io.Seeker)
	if pos, err := s.Seek(7, io.SeekStart); pos != 7 || err != nil || b.Len() != 5 {
		t.Errorf("Seek = %d, %v, Len %d", pos, err, b.Len())
	}
	if _, err := s.Seek(-1, io.SeekStart); err == nil {
		t.Error("Seek before the start succeeded")
	}
	if pos, _ := s.Seek(-2, io.SeekEnd); pos != 10 {
		t.Errorf("Seek from the end = %d", pos)
	}
	var w bytes.Buffer
	if n, err := b.(io.WriterTo).WriteTo(&w); n != 2 || err != nil || w.String() != "ld" {
		t.Errorf("WriteTo = %d, %v, %q", n, err, w.String())
	}
	at := make([]byte, 4)
	if n, err := b.(io.ReaderAt).ReadAt(at, 10); n != 2 || err != io.EOF || string(at[:2]) != "ld" {
		t.Errorf("ReadAt = %d, %v", n, err)
	}
	s.Seek(0, io.SeekStart)
	if c, err := b.(io.ByteReader).ReadByte(); c != 'h' || err != nil {
		t.Errorf("ReadByte = %q, %v", c, err)
	}
}

type recordShortBytes struct{ io.Reader }

func (recordShortBytes) Len() int     { return 8 }
func (recordShortBytes) Close() error { return nil }

func TestRecordReadAllForeignBytes(t *testing.T) {
	b, err := ReadAll(recordShortBytes{strings.NewReader("12345678")})
	if err != nil || string(b) != "12345678" {
		t.Errorf("ReadAll = %q, %v", b, err)
	}
	if _, err := ReadAll(recordShortBytes{strings.NewReader("123")}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadAll of a short Bytes: %v", err)
	}
}

func TestRecordReader(t *testing.T) {
	if r, err := NewRecordReader().ReadRecord(); r != nil || err != io.EOF {
		t.Errorf("empty reader: %v, %v", r, err)
	}
	recs := []Record{{Offset: 1, Value: NewBytes([]byte("a"))}, {Offset: 2, Headers: []Header{{Key: "k"}}}}
	rr := NewRecordReader(recs...)
	recs[0].Offset = 99 // the reader has its own copy of the slice
	for i, want := range []int64{1, 2} {
		r, err := rr.ReadRecord()
		if err != nil || r.Offset != want {
			t.Fatalf("record %d = %+v, %v", i, r, err)
		}
	}
	if r, err := rr.ReadRecord(); r != nil || err != io.EOF {
		t.Errorf("after the end: %v, %v", r, err)
	}
}
