package protocol

// OffsetFetchRequest reads a group's committed offsets. Versions 1-7 ask for
// one group (GroupID, Topics); version 8+ (KIP-709) for several (Groups).
// The caller fills the fields of the version it sends. Version 0 (offsets
// in ZooKeeper) is not implemented: Kafka 4.0 removed it.
//
// A nil topic list is sent as null from v2, which asks for every topic the
// group has offsets for. Since decoding turns an empty array into nil too,
// a decoded nil means "all topics".
type OffsetFetchRequest struct {
	GroupID       string                    // v1-7
	Topics        []OffsetFetchRequestTopic // v1-7
	Groups        []OffsetFetchRequestGroup // v8+
	RequireStable bool                      // v7+
}

type OffsetFetchRequestTopic struct {
	Name             string
	PartitionIndexes []int32
}

// OffsetFetchRequestGroup is one group of a batched fetch (v8+).
type OffsetFetchRequestGroup struct {
	GroupID string
	// MemberID and MemberEpoch are only checked with the KIP-848 consumer
	// protocol; classic consumers send null and -1.
	MemberID    *string // v9+
	MemberEpoch int32   // v9+
	Topics      []OffsetFetchRequestTopic
}

func (*OffsetFetchRequest) Key() ApiKey           { return OffsetFetch }
func (*OffsetFetchRequest) MinVersion() int16     { return 1 }
func (*OffsetFetchRequest) MaxVersion() int16     { return 9 }
func (*OffsetFetchRequest) FlexibleFrom() int16   { return 6 }
func (*OffsetFetchRequest) NewResponse() Response { return new(OffsetFetchResponse) }

func encodeOffsetFetchTopics(e *Encoder, ts []OffsetFetchRequestTopic, nullable bool) {
	if ts == nil && nullable {
		e.ArrayLen(-1)
		return
	}
	e.ArrayLen(len(ts))
	for i := range ts {
		e.String(ts[i].Name)
		e.Int32Array(ts[i].PartitionIndexes)
		e.Tags()
	}
}

func decodeOffsetFetchTopics(d *Decoder) []OffsetFetchRequestTopic {
	n := d.ArrayLen()
	if n <= 0 {
		return nil
	}
	ts := make([]OffsetFetchRequestTopic, n)
	for i := range ts {
		ts[i].Name = d.String()
		ts[i].PartitionIndexes = d.Int32Array()
		d.Tags()
	}
	return ts
}

func (r *OffsetFetchRequest) Encode(e *Encoder, v int16) {
	if v < 8 {
		e.String(r.GroupID)
		encodeOffsetFetchTopics(e, r.Topics, v >= 2)
	} else {
		e.ArrayLen(len(r.Groups))
		for i := range r.Groups {
			g := &r.Groups[i]
			e.String(g.GroupID)
			if v >= 9 {
				e.NullableString(g.MemberID)
				e.Int32(g.MemberEpoch)
			}
			encodeOffsetFetchTopics(e, g.Topics, true)
			e.Tags()
		}
	}
	if v >= 7 {
		e.Bool(r.RequireStable)
	}
	e.Tags()
}

func (r *OffsetFetchRequest) Decode(d *Decoder, v int16) error {
	if v < 8 {
		r.GroupID = d.String()
		r.Topics = decodeOffsetFetchTopics(d)
	} else if n := d.ArrayLen(); n > 0 {
		r.Groups = make([]OffsetFetchRequestGroup, n)
		for i := range r.Groups {
			g := &r.Groups[i]
			g.GroupID = d.String()
			if v >= 9 {
				g.MemberID = d.NullableString()
				g.MemberEpoch = d.Int32()
			}
			g.Topics = decodeOffsetFetchTopics(d)
			d.Tags()
		}
	}
	if v >= 7 {
		r.RequireStable = d.Bool()
	}
	d.Tags()
	return d.Err()
}

// OffsetFetchResponse holds the committed offsets: for versions 1-7 in
// Topics with a top-level ErrorCode (v2+), for v8+ per group in Groups.
type OffsetFetchResponse struct {
	ThrottleTimeMs int32                      // v3+
	Topics         []OffsetFetchResponseTopic // v1-7
	ErrorCode      int16                      // v2-7
	Groups         []OffsetFetchResponseGroup // v8+
}

type OffsetFetchResponseTopic struct {
	Name       string
	Partitions []OffsetFetchResponsePartition
}

type OffsetFetchResponsePartition struct {
	PartitionIndex       int32
	CommittedOffset      int64 // -1 when the group has no offset
	CommittedLeaderEpoch int32 // v5+; -1 when unknown
	Metadata             *string
	ErrorCode            int16
}

// OffsetFetchResponseGroup holds the offsets of one group (v8+).
type OffsetFetchResponseGroup struct {
	GroupID   string
	Topics    []OffsetFetchResponseTopic
	ErrorCode int16
}

func (*OffsetFetchResponse) Key() ApiKey       { return OffsetFetch }
func (r *OffsetFetchResponse) Throttle() int32 { return r.ThrottleTimeMs }

func encodeOffsetFetchResponseTopics(e *Encoder, ts []OffsetFetchResponseTopic, v int16) {
	e.ArrayLen(len(ts))
	for i := range ts {
		t := &ts[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int32(p.PartitionIndex)
			e.Int64(p.CommittedOffset)
			if v >= 5 {
				e.Int32(p.CommittedLeaderEpoch)
			}
			e.NullableString(p.Metadata)
			e.Int16(p.ErrorCode)
			e.Tags()
		}
		e.Tags()
	}
}

func decodeOffsetFetchResponseTopics(d *Decoder, v int16) []OffsetFetchResponseTopic {
	n := d.ArrayLenMin(d.minStruct(0, 1, 1))
	if n <= 0 {
		return nil
	}
	ts := make([]OffsetFetchResponseTopic, n)
	for i := range ts {
		t := &ts[i]
		t.Name = d.String()
		if m := d.ArrayLenMin(d.minStruct(4+8+when(v >= 5, 4)+2, 1, 0)); m > 0 {
			t.Partitions = make([]OffsetFetchResponsePartition, m)
			for j := range t.Partitions {
				p := &t.Partitions[j]
				p.PartitionIndex = d.Int32()
				p.CommittedOffset = d.Int64()
				if v >= 5 {
					p.CommittedLeaderEpoch = d.Int32()
				}
				p.Metadata = d.NullableString()
				p.ErrorCode = d.Int16()
				d.Tags()
			}
		}
		d.Tags()
	}
	return ts
}

func (r *OffsetFetchResponse) Encode(e *Encoder, v int16) {
	if v >= 3 {
		e.Int32(r.ThrottleTimeMs)
	}
	if v < 8 {
		encodeOffsetFetchResponseTopics(e, r.Topics, v)
		if v >= 2 {
			e.Int16(r.ErrorCode)
		}
	} else {
		e.ArrayLen(len(r.Groups))
		for i := range r.Groups {
			g := &r.Groups[i]
			e.String(g.GroupID)
			encodeOffsetFetchResponseTopics(e, g.Topics, v)
			e.Int16(g.ErrorCode)
			e.Tags()
		}
	}
	e.Tags()
}

func (r *OffsetFetchResponse) Decode(d *Decoder, v int16) error {
	if v >= 3 {
		r.ThrottleTimeMs = d.Int32()
	}
	if v < 8 {
		r.Topics = decodeOffsetFetchResponseTopics(d, v)
		if v >= 2 {
			r.ErrorCode = d.Int16()
		}
	} else if n := d.ArrayLenMin(d.minStruct(2, 1, 1)); n > 0 {
		r.Groups = make([]OffsetFetchResponseGroup, n)
		for i := range r.Groups {
			g := &r.Groups[i]
			g.GroupID = d.String()
			g.Topics = decodeOffsetFetchResponseTopics(d, v)
			g.ErrorCode = d.Int16()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(OffsetFetchRequest) }) }
