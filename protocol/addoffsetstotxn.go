package protocol

// AddOffsetsToTxn tells a transaction coordinator that the transaction
// will commit offsets for a consumer group (TxnOffsetCommit, sent to that
// group's coordinator, follows).
const AddOffsetsToTxn ApiKey = 25

// AddOffsetsToTxnRequest adds a group's offsets to the ongoing transaction
// of a transactional id. Version 4 only allows the broker to answer
// TRANSACTION_ABORTABLE (KIP-890); the fields never changed.
type AddOffsetsToTxnRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	GroupID         string
}

func (*AddOffsetsToTxnRequest) Key() ApiKey           { return AddOffsetsToTxn }
func (*AddOffsetsToTxnRequest) MinVersion() int16     { return 0 }
func (*AddOffsetsToTxnRequest) MaxVersion() int16     { return 4 }
func (*AddOffsetsToTxnRequest) FlexibleFrom() int16   { return 3 }
func (*AddOffsetsToTxnRequest) NewResponse() Response { return new(AddOffsetsToTxnResponse) }

func (r *AddOffsetsToTxnRequest) Encode(e *Encoder, v int16) {
	e.String(r.TransactionalID)
	e.Int64(r.ProducerID)
	e.Int16(r.ProducerEpoch)
	e.String(r.GroupID)
	e.Tags()
}

func (r *AddOffsetsToTxnRequest) Decode(d *Decoder, v int16) error {
	r.TransactionalID = d.String()
	r.ProducerID = d.Int64()
	r.ProducerEpoch = d.Int16()
	r.GroupID = d.String()
	d.Tags()
	return d.Err()
}

// AddOffsetsToTxnResponse carries one error code.
type AddOffsetsToTxnResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
}

func (*AddOffsetsToTxnResponse) Key() ApiKey       { return AddOffsetsToTxn }
func (r *AddOffsetsToTxnResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *AddOffsetsToTxnResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.Int16(r.ErrorCode)
	e.Tags()
}

func (r *AddOffsetsToTxnResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.ErrorCode = d.Int16()
	d.Tags()
	return d.Err()
}

func init() {
	apiNames[AddOffsetsToTxn] = "AddOffsetsToTxn"
	registerRequest(func() Request { return new(AddOffsetsToTxnRequest) })
}
