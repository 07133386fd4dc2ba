package kafka

import (
	"errors"
	"io"
	"time"
)

// Records as the APIs hand them: Message for the Reader, the Writer and
// Conn; Record, with its key and value as Bytes, for the Client.

const (
	LastOffset  int64 = -1 // The most recent offset available for a partition.
	FirstOffset int64 = -2 // The least recent offset available for a partition.
)

// Message is a data structure representing kafka messages.
type Message struct {
	// Topic indicates which topic this message was consumed from via Reader.
	//
	// When being used with Writer, this can be used to configure the topic if
	// not already specified on the writer itself.
	Topic string

	// Partition is read-only and MUST NOT be set when writing messages
	Partition     int
	Offset        int64
	HighWaterMark int64
	Key           []byte
	Value         []byte
	Headers       []Header

	// WriterData holds arbitrary data that the Writer hands back, untouched,
	// to its Completion function.
	WriterData interface{}

	// If not set at the creation, Time will be automatically set when
	// writing the message.
	Time time.Time
}

// Bytes is a sequence of bytes read once, from its start: a record's key or
// value as Client.Produce takes it and Client.Fetch returns it. Len is what
// is left to read. Close releases what the value holds (nothing, for the
// values of this package).
//
// Bytes values are not safe for concurrent use.
type Bytes interface {
	io.ReadCloser
	// Len returns the number of bytes not read yet.
	Len() int
}

// NewBytes returns b as Bytes, without copying it. A nil b gives nil (a
// null key or value); an empty non-nil b gives an empty, non-null value.
func NewBytes(b []byte) Bytes {
	if b == nil {
		return nil
	}
	return &recordBytes{b: b}
}

// ReadAll reads what is left of b. A nil b gives a nil slice (null).
func ReadAll(b Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	if rb, ok := b.(*recordBytes); ok {
		s := append([]byte{}, rb.rest()...)
		rb.off = len(rb.b)
		return s, nil
	}
	n := b.Len()
	if n < 0 {
		n = 0
	}
	s := make([]byte, n)
	_, err := io.ReadFull(b, s)
	return s, err
}

// recordBytes is the Bytes of a byte slice. Besides Bytes it is an
// io.Seeker, io.ReaderAt, io.ByteReader and io.WriterTo, as a bytes.Reader.
type recordBytes struct {
	b   []byte
	off int
}

func (r *recordBytes) rest() []byte { return r.b[r.off:] }

func (r *recordBytes) Len() int { return len(r.b) - r.off }

// Size returns the length of the whole slice.
func (r *recordBytes) Size() int64 { return int64(len(r.b)) }

func (r *recordBytes) Close() error { return nil }

func (r *recordBytes) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *recordBytes) ReadByte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *recordBytes) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("kafka.Bytes.ReadAt: negative offset")
	}
	if off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *recordBytes) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = int64(r.off) + offset
	case io.SeekEnd:
		abs = int64(len(r.b)) + offset
	default:
		return 0, errors.New("kafka.Bytes.Seek: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("kafka.Bytes.Seek: negative position")
	}
	if abs > int64(len(r.b)) {
		abs = int64(len(r.b))
	}
	r.off = int(abs)
	return abs, nil
}

func (r *recordBytes) WriteTo(w io.Writer) (int64, error) {
	if r.off >= len(r.b) {
		return 0, nil
	}
	rest := r.b[r.off:]
	n, err := w.Write(rest)
	r.off += n
	if err == nil && n < len(rest) {
		err = io.ErrShortWrite
	}
	return int64(n), err
}

// Record is one Kafka record, as Client.Produce sends and Client.Fetch
// returns them.
//
// Records are not safe for concurrent use.
type Record struct {
	// Offset is the record's offset in its partition. Produce ignores it:
	// the broker assigns offsets.
	Offset int64

	// Time is the record's timestamp. Produce sends the current time for a
	// zero Time.
	Time time.Time

	// Key and Value are nil for null. Records from a fetch alias the
	// response, which stays in memory while any of them is referenced.
	Key   Bytes
	Value Bytes

	// Headers are the record's headers. Produce reads them as they are;
	// the headers of fetched records must not be modified.
	Headers []Header
}

// RecordReader is a sequence of records: what Produce sends and Fetch
// returns.
//
// RecordReaders are not safe for concurrent use.
type RecordReader interface {
	// ReadRecord returns the next record, or io.EOF after the last one.
	// The Record returned is valid until the next call (its Key and Value
	// stay readable after that); copy it to keep it.
	ReadRecord() (*Record, error)
}

// NewRecordReader returns a RecordReader over a copy of records (the
// Record values are copied, not their keys and values).
func NewRecordReader(records ...Record) RecordReader {
	if len(records) == 0 {
		return emptyRecordReader{}
	}
	return &sliceRecordReader{records: append([]Record(nil), records...)}
}

type emptyRecordReader struct{}

func (emptyRecordReader) ReadRecord() (*Record, error) { return nil, io.EOF }

type sliceRecordReader struct {
	records []Record
	next    int
}

func (r *sliceRecordReader) ReadRecord() (*Record, error) {
	if r.next >= len(r.records) {
		return nil, io.EOF
	}
	r.next++
	return &r.records[r.next-1], nil
}
