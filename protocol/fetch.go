package protocol

// FetchRequest reads records from partitions led by (or, with KIP-392,
// replicated on) the broker it is sent to.
type FetchRequest struct {
	// ReplicaID is -1 for a consumer. Up to v14 it is a field of the
	// request; from v15 it travels in the ReplicaState tagged field, which
	// is only written when ReplicaID or ReplicaEpoch differ from -1, and
	// decoding sets both to -1 when the tag is absent.
	ReplicaID int32
	// ReplicaEpoch is the broker epoch of a follower (v15+, tagged); -1 for
	// a consumer.
	ReplicaEpoch   int64
	MaxWaitMs      int32
	MinBytes       int32
	MaxBytes       int32 // v3+
	IsolationLevel int8  // v4+: 0 read uncommitted, 1 read committed
	// SessionID and SessionEpoch drive incremental fetch sessions (KIP-227);
	// a full fetch without a session uses 0 and -1.
	SessionID       int32 // v7+
	SessionEpoch    int32 // v7+
	Topics          []FetchRequestTopic
	ForgottenTopics []FetchForgottenTopic // v7+
	RackID          string                // v11+: the consumer's rack (KIP-392)
	// ClusterID (v12+, tagged, nil when absent) is sent by brokers only.
	ClusterID *string
}

// FetchRequestTopic names a topic by name up to v12 and by id from v13.
type FetchRequestTopic struct {
	Topic      string   // v0-12
	TopicID    [16]byte // v13+
	Partitions []FetchRequestPartition
}

type FetchRequestPartition struct {
	Partition          int32
	CurrentLeaderEpoch int32 // v9+; -1 when unknown
	FetchOffset        int64
	LastFetchedEpoch   int32 // v12+; -1 when unknown
	LogStartOffset     int64 // v5+; -1 for consumers
	PartitionMaxBytes  int32
	// ReplicaDirectoryID (v17+, tagged) is sent by followers only; the zero
	// id is not written.
	ReplicaDirectoryID [16]byte
}

// FetchForgottenTopic lists partitions to remove from an incremental fetch
// session.
type FetchForgottenTopic struct {
	Topic      string   // v7-12
	TopicID    [16]byte // v13+
	Partitions []int32
}

func (*FetchRequest) Key() ApiKey           { return Fetch }
func (*FetchRequest) MinVersion() int16     { return 4 }
func (*FetchRequest) MaxVersion() int16     { return 17 }
func (*FetchRequest) FlexibleFrom() int16   { return 12 }
func (*FetchRequest) NewResponse() Response { return new(FetchResponse) }

func (r *FetchRequest) Encode(e *Encoder, v int16) {
	if v <= 14 {
		e.Int32(r.ReplicaID)
	}
	e.Int32(r.MaxWaitMs)
	e.Int32(r.MinBytes)
	if v >= 3 {
		e.Int32(r.MaxBytes)
	}
	if v >= 4 {
		e.Int8(r.IsolationLevel)
	}
	if v >= 7 {
		e.Int32(r.SessionID)
		e.Int32(r.SessionEpoch)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		encodeFetchTopic(e, v, t.Topic, t.TopicID)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			t.Partitions[j].encode(e, v)
		}
		e.Tags()
	}
	if v >= 7 {
		e.ArrayLen(len(r.ForgottenTopics))
		for i := range r.ForgottenTopics {
			t := &r.ForgottenTopics[i]
			encodeFetchTopic(e, v, t.Topic, t.TopicID)
			e.Int32Array(t.Partitions)
			e.Tags()
		}
	}
	if v >= 11 {
		e.String(r.RackID)
	}
	var clusterID, replicaState []byte
	if v >= 12 && r.ClusterID != nil {
		clusterID = taggedValue(func(t *Encoder) { t.String(*r.ClusterID) })
	}
	if v >= 15 && (r.ReplicaID != -1 || r.ReplicaEpoch != -1) {
		replicaState = taggedValue(func(t *Encoder) {
			t.Int32(r.ReplicaID)
			t.Int64(r.ReplicaEpoch)
			t.Tags()
		})
	}
	e.TagsWith(TaggedField{0, clusterID}, TaggedField{1, replicaState})
}

func (r *FetchRequest) Decode(d *Decoder, v int16) error {
	if v <= 14 {
		r.ReplicaID = d.Int32()
	} else {
		r.ReplicaID, r.ReplicaEpoch = -1, -1
	}
	r.MaxWaitMs = d.Int32()
	r.MinBytes = d.Int32()
	if v >= 3 {
		r.MaxBytes = d.Int32()
	}
	if v >= 4 {
		r.IsolationLevel = d.Int8()
	}
	if v >= 7 {
		r.SessionID = d.Int32()
		r.SessionEpoch = d.Int32()
	}
	if n := d.ArrayLen(); n > 0 {
		r.Topics = make([]FetchRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Topic, t.TopicID = decodeFetchTopic(d, v)
			if n := d.ArrayLen(); n > 0 {
				t.Partitions = make([]FetchRequestPartition, n)
				for j := range t.Partitions {
					t.Partitions[j].decode(d, v)
				}
			}
			d.Tags()
		}
	}
	if v >= 7 {
		if n := d.ArrayLen(); n > 0 {
			r.ForgottenTopics = make([]FetchForgottenTopic, n)
			for i := range r.ForgottenTopics {
				t := &r.ForgottenTopics[i]
				t.Topic, t.TopicID = decodeFetchTopic(d, v)
				t.Partitions = d.Int32Array()
				d.Tags()
			}
		}
	}
	if v >= 11 {
		r.RackID = d.String()
	}
	d.TagsWith(func(tag uint32, b []byte) {
		switch {
		case tag == 0:
			d.taggedValue(b, func(t *Decoder) { r.ClusterID = t.NullableString() })
		case tag == 1 && v >= 15:
			d.taggedValue(b, func(t *Decoder) {
				r.ReplicaID = t.Int32()
				r.ReplicaEpoch = t.Int64()
				t.Tags()
			})
		}
	})
	return d.Err()
}

func (p *FetchRequestPartition) encode(e *Encoder, v int16) {
	e.Int32(p.Partition)
	if v >= 9 {
		e.Int32(p.CurrentLeaderEpoch)
	}
	e.Int64(p.FetchOffset)
	if v >= 12 {
		e.Int32(p.LastFetchedEpoch)
	}
	if v >= 5 {
		e.Int64(p.LogStartOffset)
	}
	e.Int32(p.PartitionMaxBytes)
	if v >= 17 && p.ReplicaDirectoryID != ([16]byte{}) {
		e.TagsWith(TaggedField{Tag: 0, Value: p.ReplicaDirectoryID[:]})
	} else {
		e.Tags()
	}
}

func (p *FetchRequestPartition) decode(d *Decoder, v int16) {
	p.Partition = d.Int32()
	if v >= 9 {
		p.CurrentLeaderEpoch = d.Int32()
	}
	p.FetchOffset = d.Int64()
	if v >= 12 {
		p.LastFetchedEpoch = d.Int32()
	}
	if v >= 5 {
		p.LogStartOffset = d.Int64()
	}
	p.PartitionMaxBytes = d.Int32()
	d.TagsWith(func(tag uint32, b []byte) {
		if tag == 0 && v >= 17 {
			d.taggedValue(b, func(t *Decoder) { p.ReplicaDirectoryID = t.UUID() })
		}
	})
}

// encodeFetchTopic writes a topic's name up to v12, its id from v13.
func encodeFetchTopic(e *Encoder, v int16, name string, id [16]byte) {
	if v >= 13 {
		e.UUID(id)
	} else {
		e.String(name)
	}
}

func decodeFetchTopic(d *Decoder, v int16) (name string, id [16]byte) {
	if v >= 13 {
		return "", d.UUID()
	}
	return d.String(), id
}

// FetchResponse carries the records of the partitions fetched.
type FetchResponse struct {
	ThrottleTimeMs int32 // v1+
	ErrorCode      int16 // v7+: top-level error (e.g. fetch session errors)
	SessionID      int32 // v7+
	Topics         []FetchResponseTopic
	// NodeEndpoints (v16+, tagged) gives the address of every leader named
	// by a partition's CurrentLeader, so the client can move there without
	// a metadata request (KIP-951).
	NodeEndpoints []NodeEndpoint
}

// FetchResponseTopic names a topic by name up to v12 and by id from v13.
type FetchResponseTopic struct {
	Topic      string   // v0-12
	TopicID    [16]byte // v13+
	Partitions []FetchResponsePartition
}

type FetchResponsePartition struct {
	PartitionIndex   int32
	ErrorCode        int16
	HighWatermark    int64
	LastStableOffset int64 // v4+
	LogStartOffset   int64 // v5+
	// AbortedTransactions (v4+) is null (nil) unless the fetch was read
	// committed and aborted transactions overlap the records.
	AbortedTransactions []FetchAbortedTransaction
	// PreferredReadReplica (v11+, KIP-392) is the broker the consumer
	// should fetch this partition from next, or -1 to keep fetching from
	// this one. Decoding sets it to -1 at versions without the field.
	PreferredReadReplica int32
	// Records is the raw record set (record batches), nil when null. It
	// aliases the decoded input: decode the batches before reusing it.
	Records []byte

	// Tagged fields (v12+); nil when absent.
	DivergingEpoch *FetchEpochEndOffset // tag 0
	CurrentLeader  *LeaderIDAndEpoch    // tag 1
	SnapshotID     *FetchSnapshotID     // tag 2
}

type FetchAbortedTransaction struct {
	ProducerID  int64
	FirstOffset int64
}

// FetchEpochEndOffset is the largest epoch and its end offset below which
// the fetcher's log agrees with the leader's (sent on divergence).
type FetchEpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// FetchSnapshotID is the snapshot a fetcher below the log start offset
// should read (KRaft).
type FetchSnapshotID struct {
	EndOffset int64
	Epoch     int32
}

// LeaderIDAndEpoch names the current leader of a partition (KIP-951); -1
// for unknown.
type LeaderIDAndEpoch struct {
	LeaderID    int32
	LeaderEpoch int32
}

// NodeEndpoint is the address of a broker named in a response (KIP-951).
type NodeEndpoint struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   *string // nil when the broker has no rack
}

func (*FetchResponse) Key() ApiKey       { return Fetch }
func (r *FetchResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *FetchResponse) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	if v >= 7 {
		e.Int16(r.ErrorCode)
		e.Int32(r.SessionID)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		encodeFetchTopic(e, v, t.Topic, t.TopicID)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			t.Partitions[j].encode(e, v)
		}
		e.Tags()
	}
	if v >= 16 && r.NodeEndpoints != nil {
		e.TagsWith(TaggedField{0, nodeEndpointsTag(r.NodeEndpoints)})
	} else {
		e.Tags()
	}
}

func (r *FetchResponse) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	if v >= 7 {
		r.ErrorCode = d.Int16()
		r.SessionID = d.Int32()
	}
	if n := d.ArrayLenMin(d.minStruct(when(v >= 13, 16), when(v < 13, 1), 1)); n > 0 {
		r.Topics = make([]FetchResponseTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Topic, t.TopicID = decodeFetchTopic(d, v)
			// Fixed fields, then empty records and v4+ aborted transactions.
			size := d.minStruct(4+2+8+when(v >= 4, 8)+when(v >= 5, 8)+when(v >= 11, 4), 0, 1+when(v >= 4, 1))
			if n := d.ArrayLenMin(size); n > 0 {
				t.Partitions = make([]FetchResponsePartition, n)
				for j := range t.Partitions {
					t.Partitions[j].decode(d, v)
				}
			}
			d.Tags()
		}
	}
	d.TagsWith(func(tag uint32, b []byte) {
		if tag == 0 && v >= 16 {
			r.NodeEndpoints = decodeNodeEndpointsTag(d, b)
		}
	})
	return d.Err()
}

func (p *FetchResponsePartition) encode(e *Encoder, v int16) {
	e.Int32(p.PartitionIndex)
	e.Int16(p.ErrorCode)
	e.Int64(p.HighWatermark)
	if v >= 4 {
		e.Int64(p.LastStableOffset)
	}
	if v >= 5 {
		e.Int64(p.LogStartOffset)
	}
	if v >= 4 {
		e.ArrayLen(lenOrNull(p.AbortedTransactions))
		for _, a := range p.AbortedTransactions {
			e.Int64(a.ProducerID)
			e.Int64(a.FirstOffset)
			e.Tags()
		}
	}
	if v >= 11 {
		e.Int32(p.PreferredReadReplica)
	}
	e.Bytes(p.Records)
	var diverging, leader, snapshot []byte
	if p.DivergingEpoch != nil {
		diverging = taggedValue(p.DivergingEpoch.encode)
	}
	if p.CurrentLeader != nil {
		leader = taggedValue(p.CurrentLeader.encode)
	}
	if p.SnapshotID != nil {
		snapshot = taggedValue(p.SnapshotID.encode)
	}
	e.TagsWith(TaggedField{0, diverging}, TaggedField{1, leader}, TaggedField{2, snapshot})
}

func (p *FetchResponsePartition) decode(d *Decoder, v int16) {
	p.PartitionIndex = d.Int32()
	p.ErrorCode = d.Int16()
	p.HighWatermark = d.Int64()
	if v >= 4 {
		p.LastStableOffset = d.Int64()
	}
	if v >= 5 {
		p.LogStartOffset = d.Int64()
	}
	if v >= 4 {
		if n := d.ArrayLenMin(d.minStruct(16, 0, 0)); n > 0 {
			p.AbortedTransactions = make([]FetchAbortedTransaction, n)
			for k := range p.AbortedTransactions {
				a := &p.AbortedTransactions[k]
				a.ProducerID = d.Int64()
				a.FirstOffset = d.Int64()
				d.Tags()
			}
		}
	}
	p.PreferredReadReplica = -1
	if v >= 11 {
		p.PreferredReadReplica = d.Int32()
	}
	p.Records = d.Bytes()
	d.TagsWith(func(tag uint32, b []byte) {
		switch tag {
		case 0:
			p.DivergingEpoch = new(FetchEpochEndOffset)
			d.taggedValue(b, p.DivergingEpoch.decode)
		case 1:
			p.CurrentLeader = new(LeaderIDAndEpoch)
			d.taggedValue(b, p.CurrentLeader.decode)
		case 2:
			p.SnapshotID = new(FetchSnapshotID)
			d.taggedValue(b, p.SnapshotID.decode)
		}
	})
}

func (x *FetchEpochEndOffset) encode(e *Encoder) {
	e.Int32(x.Epoch)
	e.Int64(x.EndOffset)
	e.Tags()
}

func (x *FetchEpochEndOffset) decode(d *Decoder) {
	x.Epoch = d.Int32()
	x.EndOffset = d.Int64()
	d.Tags()
}

func (x *FetchSnapshotID) encode(e *Encoder) {
	e.Int64(x.EndOffset)
	e.Int32(x.Epoch)
	e.Tags()
}

func (x *FetchSnapshotID) decode(d *Decoder) {
	x.EndOffset = d.Int64()
	x.Epoch = d.Int32()
	d.Tags()
}

func (l *LeaderIDAndEpoch) encode(e *Encoder) {
	e.Int32(l.LeaderID)
	e.Int32(l.LeaderEpoch)
	e.Tags()
}

func (l *LeaderIDAndEpoch) decode(d *Decoder) {
	l.LeaderID = d.Int32()
	l.LeaderEpoch = d.Int32()
	d.Tags()
}

// nodeEndpointsTag returns the value of a NodeEndpoints tagged field.
func nodeEndpointsTag(nodes []NodeEndpoint) []byte {
	return taggedValue(func(e *Encoder) {
		e.ArrayLen(len(nodes))
		for i := range nodes {
			n := &nodes[i]
			e.Int32(n.NodeID)
			e.String(n.Host)
			e.Int32(n.Port)
			e.NullableString(n.Rack)
			e.Tags()
		}
	})
}

// decodeNodeEndpointsTag decodes the value of a NodeEndpoints tagged field,
// recording any error in d (and returning nil).
func decodeNodeEndpointsTag(d *Decoder, b []byte) (nodes []NodeEndpoint) {
	d.taggedValue(b, func(t *Decoder) {
		if n := t.ArrayLenMin(t.minStruct(4+4, 2, 0)); n > 0 {
			nodes = make([]NodeEndpoint, n)
			for i := range nodes {
				e := &nodes[i]
				e.NodeID = t.Int32()
				e.Host = t.String()
				e.Port = t.Int32()
				e.Rack = t.NullableString()
				t.Tags()
			}
		}
	})
	if d.Err() != nil {
		return nil
	}
	return nodes
}

func init() { registerRequest(func() Request { return new(FetchRequest) }) }
