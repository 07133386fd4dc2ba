package limit

import "io"

// Chunk sizes of a Buffer past its first growth: small enough that the last
// chunk wastes little, large enough that a big output takes few of them.
const (
	minChunk = 64 << 10
	maxChunk = 4 << 20
)

// Buffer collects decoded output after the bytes of a caller's dst without
// ever holding much more than the output limit: it fills dst's spare
// capacity, then grows once into a contiguous copy sized by a hint, then
// adds chunks sized by what has arrived so far, each capped at what is
// left of the limit. Nothing already written is copied while it grows, so a
// bomb refused at the limit has cost about the limit; a successful output
// in several pieces is joined once, by Bytes.
type Buffer struct {
	head   []byte   // dst, then output while it fits in one slice
	chunks [][]byte // output past head, each filled to its length
	start  int      // len(dst)
	n      int      // output bytes so far
	max    int
	hint   int
}

// NewBuffer returns a Buffer appending to dst, refusing more than max bytes
// of output (max <= 0 selects Default); hint sizes the first growth.
func NewBuffer(dst []byte, max, hint int) *Buffer {
	if hint < 512 {
		hint = 512
	}
	return &Buffer{head: dst, start: len(dst), max: Max(max), hint: hint}
}

// Len returns the output bytes written so far.
func (b *Buffer) Len() int { return b.n }

// Left returns how many more output bytes the limit allows.
func (b *Buffer) Left() int { return b.max - b.n }

// Spare returns the room left in the current piece, without allocating,
// never reaching further than one byte past the limit.
func (b *Buffer) Spare() []byte {
	last := b.head
	if len(b.chunks) > 0 {
		last = b.chunks[len(b.chunks)-1]
	}
	return clip(last[len(last):cap(last)], b.max+1-b.n)
}

// Next returns a slice to write the next output bytes into, of at least
// want bytes unless the limit leaves fewer: it never reaches further than
// one byte past the limit, so that passing it shows in Commit. It is empty
// only once the output is past the limit.
func (b *Buffer) Next(want int) []byte {
	left := b.max + 1 - b.n
	if left <= 0 {
		return nil
	}
	if want > left {
		want = left
	}
	if want < 1 {
		want = 1
	}
	if p := b.Spare(); len(p) >= want {
		return p
	}
	if len(b.chunks) == 0 && b.n == 0 {
		// First growth: one contiguous slice, as append would make, so that
		// an output that fits needs no joining.
		size := max2(b.hint, want)
		if size > left {
			size = left
		}
		grown := make([]byte, len(b.head), len(b.head)+size)
		copy(grown, b.head)
		b.head = grown
		return b.head[len(b.head):cap(b.head)]
	}
	size := b.n
	if size < minChunk {
		size = minChunk
	}
	if size > maxChunk {
		size = maxChunk
	}
	if size < want {
		size = want
	}
	if size > left {
		size = left
	}
	b.chunks = append(b.chunks, make([]byte, 0, size))
	return b.chunks[len(b.chunks)-1][:size]
}

// Commit records that the first k bytes of the slice Next returned were
// written, failing with ErrTooLarge once the output passes the limit.
func (b *Buffer) Commit(k int) error {
	if len(b.chunks) > 0 {
		c := &b.chunks[len(b.chunks)-1]
		*c = (*c)[:len(*c)+k]
	} else {
		b.head = b.head[:len(b.head)+k]
	}
	b.n += k
	if b.n > b.max {
		return ErrTooLarge
	}
	return nil
}

// Last returns the last n bytes of output (n <= Len), joined into
// scratch (of capacity n or more) when they span two pieces.
func (b *Buffer) Last(n int, scratch []byte) []byte {
	tail := b.head[b.start:]
	if len(b.chunks) > 0 {
		tail = b.chunks[len(b.chunks)-1]
	}
	if len(tail) >= n {
		return tail[len(tail)-n:]
	}
	out, at := scratch[:n], n
	for i := len(b.chunks) - 1; i >= -1 && at > 0; i-- {
		p := b.head[b.start:]
		if i >= 0 {
			p = b.chunks[i]
		}
		if len(p) > at {
			p = p[len(p)-at:]
		}
		at -= copy(out[at-len(p):at], p)
	}
	return out
}

// Bytes returns dst followed by the output, joining the pieces if there
// are several.
func (b *Buffer) Bytes() []byte {
	if len(b.chunks) == 0 {
		return b.head
	}
	out := make([]byte, len(b.head), len(b.head)+b.n-(len(b.head)-b.start))
	copy(out, b.head)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	b.head, b.chunks = out, nil
	return out
}

// Fill writes what r yields until io.EOF, failing with ErrTooLarge once
// the output passes the limit.
func (b *Buffer) Fill(r io.Reader) error {
	for {
		p := b.Next(1)
		k, err := r.Read(p)
		if cerr := b.Commit(k); cerr != nil {
			return cerr
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func clip(p []byte, n int) []byte {
	if len(p) > n {
		return p[:n]
	}
	return p
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}
