package protocol

import "fmt"

// The consumer protocol ("consumer" protocol type) defines the opaque bytes
// consumers put in JoinGroup metadata and SyncGroup assignments. Both
// formats are an int16 version followed by the fields of that version,
// never flexible. Kafka promises that newer versions only append fields, so
// a decoder reads the fields it knows and ignores the rest.

// ConsumerProtocolMaxVersion is the highest consumer protocol version this
// package knows the fields of.
const ConsumerProtocolMaxVersion int16 = 3

// ConsumerProtocolTopicPartitions is a topic and a list of its partitions.
type ConsumerProtocolTopicPartitions struct {
	Topic      string
	Partitions []int32
}

// ConsumerProtocolSubscription is the member metadata a consumer sends in
// JoinGroup for the assignors it supports.
type ConsumerProtocolSubscription struct {
	Version         int16
	Topics          []string
	UserData        []byte                            // nullable
	OwnedPartitions []ConsumerProtocolTopicPartitions // v1+
	GenerationID    int32                             // v2+, -1 when unknown
	RackID          *string                           // v3+
}

// AppendTo appends the subscription encoded at s.Version to dst. Fields
// newer than s.Version are not written; a version above
// ConsumerProtocolMaxVersion is written with the fields this package knows.
func (s *ConsumerProtocolSubscription) AppendTo(dst []byte) []byte {
	e := Encoder{B: dst}
	v := s.Version
	e.Int16(v)
	grpPutStrings(&e, s.Topics)
	e.Bytes(s.UserData)
	if v >= 1 {
		grpPutTopicPartitions(&e, s.OwnedPartitions)
	}
	if v >= 2 {
		e.Int32(s.GenerationID)
	}
	if v >= 3 {
		e.NullableString(s.RackID)
	}
	return e.B
}

// Decode reads a subscription from b, replacing every field of s. UserData
// aliases b.
func (s *ConsumerProtocolSubscription) Decode(b []byte) error {
	*s = ConsumerProtocolSubscription{GenerationID: -1}
	d := NewDecoder(b, false)
	v := d.Int16()
	if d.Err() == nil && v < 0 {
		return fmt.Errorf("kafka protocol: consumer protocol subscription has version %d", v)
	}
	s.Version = v
	s.Topics = grpGetStrings(d)
	s.UserData = d.Bytes()
	if v >= 1 {
		s.OwnedPartitions = grpGetTopicPartitions(d)
	}
	if v >= 2 {
		s.GenerationID = d.Int32()
	}
	if v >= 3 {
		s.RackID = d.NullableString()
	}
	return d.Err()
}

// ConsumerProtocolAssignment is the assignment the group leader hands each
// consumer through SyncGroup.
type ConsumerProtocolAssignment struct {
	Version            int16
	AssignedPartitions []ConsumerProtocolTopicPartitions
	UserData           []byte // nullable
}

// AppendTo appends the assignment to dst. Every version (0-3) has the same
// fields.
func (a *ConsumerProtocolAssignment) AppendTo(dst []byte) []byte {
	e := Encoder{B: dst}
	e.Int16(a.Version)
	grpPutTopicPartitions(&e, a.AssignedPartitions)
	e.Bytes(a.UserData)
	return e.B
}

// Decode reads an assignment from b, replacing every field of a. UserData
// aliases b.
func (a *ConsumerProtocolAssignment) Decode(b []byte) error {
	*a = ConsumerProtocolAssignment{}
	d := NewDecoder(b, false)
	v := d.Int16()
	if d.Err() == nil && v < 0 {
		return fmt.Errorf("kafka protocol: consumer protocol assignment has version %d", v)
	}
	a.Version = v
	a.AssignedPartitions = grpGetTopicPartitions(d)
	a.UserData = d.Bytes()
	return d.Err()
}

// Helpers shared by the group and consumer protocol messages.

func grpPutStrings(e *Encoder, ss []string) {
	e.ArrayLen(len(ss))
	for _, s := range ss {
		e.String(s)
	}
}

func grpGetStrings(d *Decoder) []string {
	n := d.ArrayLen()
	if n <= 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.String()
	}
	return ss
}

func grpPutInt32s(e *Encoder, vs []int32) {
	e.ArrayLen(len(vs))
	for _, v := range vs {
		e.Int32(v)
	}
}

func grpGetInt32s(d *Decoder) []int32 {
	n := d.ArrayLen()
	if n <= 0 {
		return nil
	}
	vs := make([]int32, n)
	for i := range vs {
		vs[i] = d.Int32()
	}
	return vs
}

// grpPutBytes writes a non-nullable bytes field: nil is written as empty,
// since brokers reject a null there.
func grpPutBytes(e *Encoder, b []byte) {
	if b == nil {
		b = []byte{}
	}
	e.Bytes(b)
}

// grpGetBytes reads a non-nullable bytes field; empty reads as nil, the
// mirror of grpPutBytes. The result aliases the input.
func grpGetBytes(d *Decoder) []byte {
	if b := d.Bytes(); len(b) > 0 {
		return b
	}
	return nil
}

func grpPutTopicPartitions(e *Encoder, tps []ConsumerProtocolTopicPartitions) {
	e.ArrayLen(len(tps))
	for _, tp := range tps {
		e.String(tp.Topic)
		grpPutInt32s(e, tp.Partitions)
	}
}

func grpGetTopicPartitions(d *Decoder) []ConsumerProtocolTopicPartitions {
	n := d.ArrayLen()
	if n <= 0 {
		return nil
	}
	tps := make([]ConsumerProtocolTopicPartitions, n)
	for i := range tps {
		tps[i].Topic = d.String()
		tps[i].Partitions = grpGetInt32s(d)
	}
	return tps
}
