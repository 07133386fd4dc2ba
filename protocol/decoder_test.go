package protocol

import (
	"encoding/binary"
	"reflect"
	"runtime"
	"testing"
)

// allocated returns the bytes and allocations fn makes, averaged over
// runs (as testing.AllocsPerRun does) against background noise.
func allocated(fn func()) (bytes uint64, allocs float64) {
	const runs = 20
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fn() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		fn()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs, testing.AllocsPerRun(runs, fn)
}

// A response claiming far more partitions than its bytes can hold must fail
// before the partitions are allocated: ArrayLen alone would accept a count
// up to the remaining bytes, and each partition struct takes ~100 bytes of
// memory.
func TestHostilePartitionCount(t *testing.T) {
	fetchHead := func(flexible bool, count int) []byte {
		if flexible { // v12: compact lengths, topic tags
			return wire(int32(0), int16(0), int32(0), byte(2), byte(2), "t", binary.AppendUvarint(nil, uint64(count+1)))
		}
		return wire(int32(0), int16(0), int32(0), int32(1), int16(1), "t", int32(count))
	}
	pad := func(b []byte, size int) []byte { return append(b, make([]byte, size-len(b))...) }
	cases := []struct {
		name     string
		v        int16
		flexible bool
		in       []byte
		newResp  func() Message
	}{
		// 64 bytes claiming a million partitions.
		{"fetch v11, 64 bytes", 11, false, pad(fetchHead(false, 1e6), 64), func() Message { return new(FetchResponse) }},
		{"fetch v12, 64 bytes", 12, true, pad(fetchHead(true, 1e6), 64), func() Message { return new(FetchResponse) }},
		// A million partitions in a million bytes passes ArrayLen: each
		// partition takes at least 42 bytes at v11, 37 at v12.
		{"fetch v11, 1 MB", 11, false, pad(fetchHead(false, 1e6), 1e6+64), func() Message { return new(FetchResponse) }},
		{"fetch v12, 1 MB", 12, true, pad(fetchHead(true, 1e6), 1e6+64), func() Message { return new(FetchResponse) }},
		// Metadata v1: no brokers, no cluster id, controller, one topic.
		{"metadata v1, 1 MB", 1, false,
			pad(wire(int32(0), int32(0), int32(1), int16(0), int16(1), "t", byte(0), int32(1e6)), 1e6+64),
			func() Message { return new(MetadataResponse) }},
	}
	for _, c := range cases {
		var err error
		bytes, allocs := allocated(func() { err = c.newResp().Decode(NewDecoder(c.in, c.flexible), c.v) })
		if err == nil {
			t.Errorf("%s: no error", c.name)
		}
		t.Logf("%s: %d bytes in %v allocations", c.name, bytes, allocs)
		if bytes > 4<<10 || allocs > 4 {
			t.Errorf("%s: decoding allocated %d bytes in %v allocations", c.name, bytes, allocs)
		}
	}
}

// TestArrayLenMinConservative checks that no minimum element size given to
// ArrayLenMin is above the true one, which would reject valid messages: for
// every message, version and array (reached through single elements of
// the arrays around it), a message with many zero-valued elements there,
// each at its smallest encoding, must decode.
func TestArrayLenMinConservative(t *testing.T) {
	const n = 1000 // more than any bytes after the array
	check := func(m Message, v int16, flexible bool, path []int) {
		t.Helper()
		typ := reflect.TypeOf(m).Elem()
		msg := zeroWithArray(typ, path, n).Addr().Interface().(Message)
		d := NewDecoder(encoded(msg, v, flexible), flexible)
		if err := reflect.New(typ).Interface().(Message).Decode(d, v); err != nil || d.Remaining() != 0 {
			t.Errorf("%s v%d, %d zero elements at %s: %v (%d bytes left)", typ.Name(), v, n, pathName(typ, path), err, d.Remaining())
		}
	}
	checked := 0
	for k := range Implemented() {
		proto := NewRequest(k)
		for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
			for _, m := range []Message{NewRequest(k), proto.NewResponse()} {
				for _, path := range arrayPaths(reflect.TypeOf(m).Elem(), nil) {
					check(m, v, IsFlexible(proto, v), path)
					checked++
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d arrays checked", checked)
	}
	for v := int16(0); v <= ConsumerProtocolMaxVersion; v++ {
		s := ConsumerProtocolSubscription{Version: v, OwnedPartitions: make([]ConsumerProtocolTopicPartitions, n)}
		var got ConsumerProtocolSubscription
		if err := got.Decode(s.AppendTo(nil)); err != nil {
			t.Errorf("subscription v%d: %v", v, err)
		}
	}
	a := ConsumerProtocolAssignment{AssignedPartitions: make([]ConsumerProtocolTopicPartitions, n)}
	if err := new(ConsumerProtocolAssignment).Decode(a.AppendTo(nil)); err != nil {
		t.Errorf("assignment: %v", err)
	}
}

// arrayPaths lists the field index paths of every array (but []byte) in
// struct type typ and in the element structs of its arrays.
func arrayPaths(typ reflect.Type, prefix []int) [][]int {
	var paths [][]int
	for i := 0; i < typ.NumField(); i++ {
		ft := typ.Field(i).Type
		if ft.Kind() != reflect.Slice || ft.Elem().Kind() == reflect.Uint8 {
			continue
		}
		p := append(append([]int(nil), prefix...), i)
		paths = append(paths, p)
		if ft.Elem().Kind() == reflect.Struct {
			paths = append(paths, arrayPaths(ft.Elem(), p)...)
		}
	}
	return paths
}

// zeroWithArray returns a zero typ whose array at path holds n zero
// elements, inside single zero elements of the arrays on the way.
func zeroWithArray(typ reflect.Type, path []int, n int) reflect.Value {
	v := reflect.New(typ).Elem()
	f := v.Field(path[0])
	if len(path) == 1 {
		f.Set(reflect.MakeSlice(f.Type(), n, n))
		return v
	}
	s := reflect.MakeSlice(f.Type(), 1, 1)
	s.Index(0).Set(zeroWithArray(f.Type().Elem(), path[1:], n))
	f.Set(s)
	return v
}

func pathName(typ reflect.Type, path []int) string {
	name := ""
	for _, i := range path {
		f := typ.Field(i)
		name += "." + f.Name
		typ = f.Type.Elem()
	}
	return name[1:]
}
