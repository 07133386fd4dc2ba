package protocol

// EndTxn commits or aborts a transaction at its transaction coordinator.
const EndTxn ApiKey = 26

// EndTxnRequest ends the ongoing transaction of a transactional id.
//
// Versions 0-4 are implemented (v4 only allows TRANSACTION_ABORTABLE in
// answers). Version 5 (KIP-890 part 2) makes the coordinator bump the
// producer epoch at every transaction end and return the new producer id
// and epoch, which the producer must then use: a caller unaware of that
// would be fenced at its next transaction, so v5 is left out.
type EndTxnRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Committed       bool // false aborts the transaction
}

func (*EndTxnRequest) Key() ApiKey           { return EndTxn }
func (*EndTxnRequest) MinVersion() int16     { return 0 }
func (*EndTxnRequest) MaxVersion() int16     { return 4 }
func (*EndTxnRequest) FlexibleFrom() int16   { return 3 }
func (*EndTxnRequest) NewResponse() Response { return new(EndTxnResponse) }

func (r *EndTxnRequest) Encode(e *Encoder, v int16) {
	e.String(r.TransactionalID)
	e.Int64(r.ProducerID)
	e.Int16(r.ProducerEpoch)
	e.Bool(r.Committed)
	e.Tags()
}

func (r *EndTxnRequest) Decode(d *Decoder, v int16) error {
	r.TransactionalID = d.String()
	r.ProducerID = d.Int64()
	r.ProducerEpoch = d.Int16()
	r.Committed = d.Bool()
	d.Tags()
	return d.Err()
}

// EndTxnResponse carries one error code.
type EndTxnResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
}

func (*EndTxnResponse) Key() ApiKey       { return EndTxn }
func (r *EndTxnResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *EndTxnResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.Int16(r.ErrorCode)
	e.Tags()
}

func (r *EndTxnResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.ErrorCode = d.Int16()
	d.Tags()
	return d.Err()
}

func init() {
	apiNames[EndTxn] = "EndTxn"
	registerRequest(func() Request { return new(EndTxnRequest) })
}
