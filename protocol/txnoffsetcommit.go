package protocol

// TxnOffsetCommit writes a group's offsets as part of a transaction, at the
// group's coordinator; they become visible when the transaction commits.
const TxnOffsetCommit ApiKey = 28

// TxnOffsetCommitRequest commits offsets for a group inside the ongoing
// transaction of a transactional id (after AddOffsetsToTxn for the group).
// Version 4 only allows the broker to answer TRANSACTION_ABORTABLE.
type TxnOffsetCommitRequest struct {
	TransactionalID string
	GroupID         string
	ProducerID      int64
	ProducerEpoch   int16
	// The group member's identity (KIP-447), so the coordinator can fence
	// zombies of a rebalanced consumer: -1, "" and nil when unknown.
	GenerationID    int32   // v3+
	MemberID        string  // v3+
	GroupInstanceID *string // v3+
	Topics          []TxnOffsetCommitRequestTopic
}

type TxnOffsetCommitRequestTopic struct {
	Name       string
	Partitions []TxnOffsetCommitRequestPartition
}

type TxnOffsetCommitRequestPartition struct {
	PartitionIndex       int32
	CommittedOffset      int64
	CommittedLeaderEpoch int32 // v2+; -1 when unknown
	CommittedMetadata    *string
}

func (*TxnOffsetCommitRequest) Key() ApiKey           { return TxnOffsetCommit }
func (*TxnOffsetCommitRequest) MinVersion() int16     { return 0 }
func (*TxnOffsetCommitRequest) MaxVersion() int16     { return 4 }
func (*TxnOffsetCommitRequest) FlexibleFrom() int16   { return 3 }
func (*TxnOffsetCommitRequest) NewResponse() Response { return new(TxnOffsetCommitResponse) }

func (r *TxnOffsetCommitRequest) Encode(e *Encoder, v int16) {
	e.String(r.TransactionalID)
	e.String(r.GroupID)
	e.Int64(r.ProducerID)
	e.Int16(r.ProducerEpoch)
	if v >= 3 {
		e.Int32(r.GenerationID)
		e.String(r.MemberID)
		e.NullableString(r.GroupInstanceID)
	}
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.ArrayLen(len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			e.Int32(p.PartitionIndex)
			e.Int64(p.CommittedOffset)
			if v >= 2 {
				e.Int32(p.CommittedLeaderEpoch)
			}
			e.NullableString(p.CommittedMetadata)
			e.Tags()
		}
		e.Tags()
	}
	e.Tags()
}

func (r *TxnOffsetCommitRequest) Decode(d *Decoder, v int16) error {
	r.TransactionalID = d.String()
	r.GroupID = d.String()
	r.ProducerID = d.Int64()
	r.ProducerEpoch = d.Int16()
	if v >= 3 {
		r.GenerationID = d.Int32()
		r.MemberID = d.String()
		r.GroupInstanceID = d.NullableString()
	}
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.Topics = make([]TxnOffsetCommitRequestTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			if m := d.ArrayLenMin(d.minStruct(4+8+when(v >= 2, 4), 1, 0)); m > 0 {
				t.Partitions = make([]TxnOffsetCommitRequestPartition, m)
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.PartitionIndex = d.Int32()
					p.CommittedOffset = d.Int64()
					if v >= 2 {
						p.CommittedLeaderEpoch = d.Int32()
					}
					p.CommittedMetadata = d.NullableString()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// TxnOffsetCommitResponse has an error code per partition.
type TxnOffsetCommitResponse struct {
	ThrottleTimeMs int32
	Topics         []TxnOffsetCommitResponseTopic
}

type TxnOffsetCommitResponseTopic = TopicPartitionErrors

type TxnOffsetCommitResponsePartition = PartitionError

func (*TxnOffsetCommitResponse) Key() ApiKey       { return TxnOffsetCommit }
func (r *TxnOffsetCommitResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *TxnOffsetCommitResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	encodeTopicPartitionErrors(e, r.Topics)
	e.Tags()
}

func (r *TxnOffsetCommitResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.Topics = decodeTopicPartitionErrors(d)
	d.Tags()
	return d.Err()
}

func init() {
	apiNames[TxnOffsetCommit] = "TxnOffsetCommit"
	registerRequest(func() Request { return new(TxnOffsetCommitRequest) })
}
