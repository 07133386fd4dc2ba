package protocol

// ProduceRequest appends record batches to partitions.
//
// With Acks 0 the broker sends no response at all: the caller must not
// wait for one.
//
// Versions 11 and 12 are byte for byte version 10; they change what a
// transactional batch means (v11: the TRANSACTION_ABORTABLE error; v12: on
// a broker with transaction protocol v2 the produce adds the partition to
// the transaction itself, and without it a transactional producer must not
// use v12). A producer without TransactionalID sees no difference; a
// transactional one should cap the version it picks.
type ProduceRequest struct {
	TransactionalID *string // v3+; nil unless transactional
	// Acks is 0 (no response), 1 (leader) or -1 (all in-sync replicas).
	Acks      int16
	TimeoutMs int32
	Topics    []ProduceRequestTopic
}

type ProduceRequestTopic struct {
	Name       string
	Partitions []ProduceRequestPartition
}

type ProduceRequestPartition struct {
	Index int32 // the partition index
	// Records holds encoded record batches, nil for null. Decoding aliases
	// the input.
	Records []byte
}

func (*ProduceRequest) Key() ApiKey           { return Produce }
func (*ProduceRequest) MinVersion() int16     { return 3 }
func (*ProduceRequest) MaxVersion() int16     { return 12 }
func (*ProduceRequest) FlexibleFrom() int16   { return 9 }
func (*ProduceRequest) NewResponse() Response { return new(ProduceResponse) }

func (r *ProduceRequest) Encode(e *Encoder, v int16) {
	if v >= 3 {
		e.NullableString(r.TransactionalID)
	}
	e.Int16(r.Acks)
	e.Int32(r.TimeoutMs)
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int32(p.Index)
			e.Bytes(p.Records)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *ProduceRequest) Decode(d *Decoder, v int16) error {
	if v >= 3 {
		r.TransactionalID = d.NullableString()
	}
	r.Acks = d.Int16()
	r.TimeoutMs = d.Int32()
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]ProduceRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if n := d.ArrayLen(); n > 0 {
				t.Partitions = make([]ProduceRequestPartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.Index = d.Int32()
					p.Records = d.Bytes()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

type ProduceResponse struct {
	Topics         []ProduceResponseTopic
	ThrottleTimeMs int32 // v1+
	// NodeEndpoints (v10+, tagged) gives the address of every leader named
	// by a partition's CurrentLeader (KIP-951).
	NodeEndpoints []NodeEndpoint
}

type ProduceResponseTopic struct {
	Name       string
	Partitions []ProduceResponsePartition
}

type ProduceResponsePartition struct {
	Index      int32
	ErrorCode  int16
	BaseOffset int64
	// LogAppendTimeMs is the broker's append time for topics using
	// LogAppendTime, -1 for CreateTime topics.
	LogAppendTimeMs int64                // v2+
	LogStartOffset  int64                // v5+
	RecordErrors    []ProduceRecordError // v8+
	ErrorMessage    *string              // v8+
	// CurrentLeader (v10+, tagged, nil when absent) names the new leader
	// on NOT_LEADER_OR_FOLLOWER.
	CurrentLeader *LeaderIDAndEpoch
}

// ProduceRecordError names a record that made the broker drop its batch.
type ProduceRecordError struct {
	BatchIndex             int32
	BatchIndexErrorMessage *string
}

func (*ProduceResponse) Key() ApiKey       { return Produce }
func (r *ProduceResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *ProduceResponse) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int32(p.Index)
			e.Int16(p.ErrorCode)
			e.Int64(p.BaseOffset)
			if v >= 2 {
				e.Int64(p.LogAppendTimeMs)
			}
			if v >= 5 {
				e.Int64(p.LogStartOffset)
			}
			if v >= 8 {
				e.ArrayLen(len(p.RecordErrors))
				for _, re := range p.RecordErrors {
					e.Int32(re.BatchIndex)
					e.NullableString(re.BatchIndexErrorMessage)
					e.Tags()
				}
				e.NullableString(p.ErrorMessage)
			}
			if v >= 10 && p.CurrentLeader != nil {
				e.TagsWith(TaggedField{0, taggedValue(p.CurrentLeader.encode)})
			} else {
				e.Tags()
			}
		}
		e.Tags()
	}
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	if v >= 10 && r.NodeEndpoints != nil {
		e.TagsWith(TaggedField{0, nodeEndpointsTag(r.NodeEndpoints)})
	} else {
		e.Tags()
	}
}

func (r *ProduceResponse) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.Topics = make([]ProduceResponseTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			// Fixed fields, then v8+ empty record errors and null message.
			size := d.minStruct(4+2+8+when(v >= 2, 8)+when(v >= 5, 8), when(v >= 8, 1), when(v >= 8, 1))
			if n := d.ArrayLenMin(size); n > 0 {
				t.Partitions = make([]ProduceResponsePartition, n)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.Index = d.Int32()
					p.ErrorCode = d.Int16()
					p.BaseOffset = d.Int64()
					if v >= 2 {
						p.LogAppendTimeMs = d.Int64()
					}
					if v >= 5 {
						p.LogStartOffset = d.Int64()
					}
					if v >= 8 {
						if n := d.ArrayLenMin(d.minStruct(4, 1, 0)); n > 0 {
							p.RecordErrors = make([]ProduceRecordError, n)
							for k := range p.RecordErrors {
								re := &p.RecordErrors[k]
								re.BatchIndex = d.Int32()
								re.BatchIndexErrorMessage = d.NullableString()
								d.Tags()
							}
						}
						p.ErrorMessage = d.NullableString()
					}
					d.TagsWith(func(tag uint32, b []byte) {
						if tag == 0 && v >= 10 {
							p.CurrentLeader = new(LeaderIDAndEpoch)
							d.taggedValue(b, p.CurrentLeader.decode)
						}
					})
				}
			}
			d.Tags()
		}
	}
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	d.TagsWith(func(tag uint32, b []byte) {
		if tag == 0 && v >= 10 {
			r.NodeEndpoints = decodeNodeEndpointsTag(d, b)
		}
	})
	return d.Err()
}

func init() { registerRequest(func() Request { return new(ProduceRequest) }) }
