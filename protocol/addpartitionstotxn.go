package protocol

// AddPartitionsToTxn registers partitions with a transaction at its
// transaction coordinator, before the producer writes transactional
// batches to them.
const AddPartitionsToTxn ApiKey = 24

// AddPartitionsToTxnRequest adds partitions to the ongoing transaction of
// a transactional id.
//
// Only versions 0-3 are implemented: they are the ones producers send.
// From version 4 the request batches several transactions and is meant for
// brokers verifying a transactional produce (KIP-890); a client speaking it
// would be refused unless it had the cluster's CLUSTER_ACTION permission,
// and advertising it here would make a RoundTripper pick it.
type AddPartitionsToTxnRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Topics          []AddPartitionsToTxnTopic
}

type AddPartitionsToTxnTopic struct {
	Name       string
	Partitions []int32
}

func (*AddPartitionsToTxnRequest) Key() ApiKey           { return AddPartitionsToTxn }
func (*AddPartitionsToTxnRequest) MinVersion() int16     { return 0 }
func (*AddPartitionsToTxnRequest) MaxVersion() int16     { return 3 }
func (*AddPartitionsToTxnRequest) FlexibleFrom() int16   { return 3 }
func (*AddPartitionsToTxnRequest) NewResponse() Response { return new(AddPartitionsToTxnResponse) }

func (r *AddPartitionsToTxnRequest) Encode(e *Encoder, v int16) {
	e.String(r.TransactionalID)
	e.Int64(r.ProducerID)
	e.Int16(r.ProducerEpoch)
	e.ArrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		e.String(t.Name)
		e.Int32Array(t.Partitions)
		e.Tags()
	}
	e.Tags()
}

func (r *AddPartitionsToTxnRequest) Decode(d *Decoder, v int16) error {
	r.TransactionalID = d.String()
	r.ProducerID = d.Int64()
	r.ProducerEpoch = d.Int16()
	if n := d.ArrayLenMin(d.minStruct(0, 1, 1)); n > 0 {
		r.Topics = make([]AddPartitionsToTxnTopic, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			t.Name = d.String()
			t.Partitions = d.Int32Array()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// AddPartitionsToTxnResponse has an error code per partition: all of them
// are added, or none.
type AddPartitionsToTxnResponse struct {
	ThrottleTimeMs int32
	Results        []AddPartitionsToTxnTopicResult
}

type AddPartitionsToTxnTopicResult = TopicPartitionErrors

type AddPartitionsToTxnPartitionResult = PartitionError

func (*AddPartitionsToTxnResponse) Key() ApiKey       { return AddPartitionsToTxn }
func (r *AddPartitionsToTxnResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *AddPartitionsToTxnResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	encodeTopicPartitionErrors(e, r.Results)
	e.Tags()
}

func (r *AddPartitionsToTxnResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.Results = decodeTopicPartitionErrors(d)
	d.Tags()
	return d.Err()
}

func init() {
	apiNames[AddPartitionsToTxn] = "AddPartitionsToTxn"
	registerRequest(func() Request { return new(AddPartitionsToTxnRequest) })
}
