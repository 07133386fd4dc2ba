package protocol

import (
	"bytes"
	"reflect"
	"testing"
)

// consumerSubscriptions returns one subscription per known version, with every
// field of that version set.
func consumerSubscriptions() []ConsumerProtocolSubscription {
	var ss []ConsumerProtocolSubscription
	for v := int16(0); v <= ConsumerProtocolMaxVersion; v++ {
		s := ConsumerProtocolSubscription{
			Version:      v,
			Topics:       []string{"t1", "t2"},
			UserData:     []byte{1, 2, 3},
			GenerationID: -1,
		}
		if v >= 1 {
			s.OwnedPartitions = []ConsumerProtocolTopicPartitions{{"t1", []int32{0, 2}}, {"t2", nil}}
		}
		if v >= 2 {
			s.GenerationID = 12
		}
		if v >= 3 {
			s.RackID = strp("use1-az1")
		}
		ss = append(ss, s)
	}
	return ss
}

func TestConsumerProtocolSubscriptionRoundTrip(t *testing.T) {
	for _, s := range consumerSubscriptions() {
		var got ConsumerProtocolSubscription
		if err := got.Decode(s.AppendTo(nil)); err != nil {
			t.Fatalf("v%d: %v", s.Version, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("v%d:\n got %+v\nwant %+v", s.Version, got, s)
		}
	}
	// Null user data stays null, empty stays empty.
	for _, ud := range [][]byte{nil, {}} {
		s := ConsumerProtocolSubscription{Version: 0, UserData: ud, GenerationID: -1}
		var got ConsumerProtocolSubscription
		if err := got.Decode(s.AppendTo(nil)); err != nil {
			t.Fatal(err)
		}
		if (got.UserData == nil) != (ud == nil) {
			t.Fatalf("user data %#v decoded as %#v", ud, got.UserData)
		}
	}
}

func TestConsumerProtocolAssignmentRoundTrip(t *testing.T) {
	for v := int16(0); v <= ConsumerProtocolMaxVersion; v++ {
		for _, a := range []ConsumerProtocolAssignment{
			{Version: v},
			{Version: v, AssignedPartitions: []ConsumerProtocolTopicPartitions{{"t1", []int32{0, 1}}, {"t2", []int32{5}}}, UserData: []byte{9}},
		} {
			var got ConsumerProtocolAssignment
			if err := got.Decode(a.AppendTo(nil)); err != nil {
				t.Fatalf("v%d: %v", v, err)
			}
			if !reflect.DeepEqual(got, a) {
				t.Fatalf("v%d:\n got %+v\nwant %+v", v, got, a)
			}
		}
	}
}

func TestConsumerProtocolBytes(t *testing.T) {
	sub := ConsumerProtocolSubscription{
		Version:         3,
		Topics:          []string{"t"},
		OwnedPartitions: []ConsumerProtocolTopicPartitions{{"t", []int32{0, 1}}},
		GenerationID:    7,
		RackID:          strp("r1"),
	}
	subBytes := wire(
		int16(3),      // version
		int32(1),      // topics: 1
		int16(1), "t", //
		int32(-1),     // user_data: null
		int32(1),      // owned_partitions: 1
		int16(1), "t", // topic
		int32(2), int32(0), int32(1), // partitions [0 1]
		int32(7),       // generation_id
		int16(2), "r1", // rack_id
	)
	if got := sub.AppendTo(nil); !bytes.Equal(got, subBytes) {
		t.Errorf("subscription:\n got % x\nwant % x", got, subBytes)
	}
	var gotSub ConsumerProtocolSubscription
	if err := gotSub.Decode(subBytes); err != nil || !reflect.DeepEqual(gotSub, sub) {
		t.Errorf("subscription decode: %v %+v", err, gotSub)
	}

	// A version 0 subscription as old clients send it: no owned
	// partitions, so no generation either.
	var v0 ConsumerProtocolSubscription
	if err := v0.Decode(wire(int16(0), int32(1), int16(1), "t", int32(1), byte(0xab))); err != nil {
		t.Fatal(err)
	}
	if want := (ConsumerProtocolSubscription{Topics: []string{"t"}, UserData: []byte{0xab}, GenerationID: -1}); !reflect.DeepEqual(v0, want) {
		t.Errorf("v0 subscription: %+v", v0)
	}

	asg := ConsumerProtocolAssignment{
		Version:            1,
		AssignedPartitions: []ConsumerProtocolTopicPartitions{{"t", []int32{2}}},
		UserData:           []byte{},
	}
	asgBytes := wire(
		int16(1),      // version
		int32(1),      // assigned_partitions: 1
		int16(1), "t", // topic
		int32(1), int32(2), // partitions [2]
		int32(0), // user_data: empty
	)
	if got := asg.AppendTo(nil); !bytes.Equal(got, asgBytes) {
		t.Errorf("assignment:\n got % x\nwant % x", got, asgBytes)
	}
	var gotAsg ConsumerProtocolAssignment
	if err := gotAsg.Decode(asgBytes); err != nil || !reflect.DeepEqual(gotAsg, asg) {
		t.Errorf("assignment decode: %v %+v", err, gotAsg)
	}
}

// Newer versions only append fields: decoding reads the known ones and
// keeps the version.
func TestConsumerProtocolNewerVersion(t *testing.T) {
	s := consumerSubscriptions()[ConsumerProtocolMaxVersion]
	s.Version = 9
	b := append(s.AppendTo(nil), 0xde, 0xad, 0xbe, 0xef)
	var got ConsumerProtocolSubscription
	if err := got.Decode(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("got %+v\nwant %+v", got, s)
	}

	a := ConsumerProtocolAssignment{Version: 7, AssignedPartitions: []ConsumerProtocolTopicPartitions{{"t", []int32{1}}}}
	b = append(a.AppendTo(nil), 1, 2, 3)
	var gotA ConsumerProtocolAssignment
	if err := gotA.Decode(b); err != nil || !reflect.DeepEqual(gotA, a) {
		t.Fatalf("assignment: %v %+v", err, gotA)
	}
}

func TestConsumerProtocolErrors(t *testing.T) {
	var s ConsumerProtocolSubscription
	var a ConsumerProtocolAssignment
	for _, in := range [][]byte{nil, {0}, {0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}} {
		if s.Decode(in) == nil {
			t.Errorf("subscription % x: no error", in)
		}
		if a.Decode(in) == nil {
			t.Errorf("assignment % x: no error", in)
		}
	}
	full := consumerSubscriptions()[3].AppendTo(nil)
	for cut := 0; cut < len(full); cut++ {
		if s.Decode(full[:cut]) == nil {
			t.Errorf("subscription cut at %d of %d: no error", cut, len(full))
		}
	}
}
