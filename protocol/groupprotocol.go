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
	e.StringArray(s.Topics)
	e.Bytes(s.UserData)
	if v >= 1 {
		encodeTopicPartitions(&e, s.OwnedPartitions)
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
	s.Topics = d.StringArray()
	s.UserData = d.Bytes()
	if v >= 1 {
		s.OwnedPartitions = decodeTopicPartitions(d)
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
	encodeTopicPartitions(&e, a.AssignedPartitions)
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
	a.AssignedPartitions = decodeTopicPartitions(d)
	a.UserData = d.Bytes()
	return d.Err()
}

func encodeTopicPartitions(e *Encoder, tps []ConsumerProtocolTopicPartitions) {
	e.ArrayLen(len(tps))
	for _, tp := range tps {
		e.String(tp.Topic)
		e.Int32Array(tp.Partitions)
	}
}

func decodeTopicPartitions(d *Decoder) []ConsumerProtocolTopicPartitions {
	n := d.ArrayLenMin(d.minStruct(0, 1, 1))
	if n <= 0 {
		return nil
	}
	tps := make([]ConsumerProtocolTopicPartitions, n)
	for i := range tps {
		tps[i].Topic = d.String()
		tps[i].Partitions = d.Int32Array()
	}
	return tps
}
