package protocol

// InitProducerIdRequest obtains a producer ID and epoch, for idempotent or
// transactional producing. Version 5 only allows the TRANSACTION_ABORTABLE
// error (KIP-890); v6 of newer brokers (two-phase commit fields, KIP-939)
// is not implemented.
type InitProducerIdRequest struct {
	TransactionalID      *string // nil for an idempotent, non-transactional producer
	TransactionTimeoutMs int32
	ProducerID           int64 // v3+: -1 unless resuming after INVALID_PRODUCER_EPOCH
	ProducerEpoch        int16 // v3+: -1 unless resuming
}

func (*InitProducerIdRequest) Key() ApiKey           { return InitProducerId }
func (*InitProducerIdRequest) MinVersion() int16     { return 0 }
func (*InitProducerIdRequest) MaxVersion() int16     { return 5 }
func (*InitProducerIdRequest) FlexibleFrom() int16   { return 2 }
func (*InitProducerIdRequest) NewResponse() Response { return new(InitProducerIdResponse) }

func (r *InitProducerIdRequest) Encode(e *Encoder, v int16) {
	e.NullableString(r.TransactionalID)
	e.Int32(r.TransactionTimeoutMs)
	if v >= 3 {
		e.Int64(r.ProducerID)
		e.Int16(r.ProducerEpoch)
	}
	e.Tags()
}

func (r *InitProducerIdRequest) Decode(d *Decoder, v int16) error {
	r.TransactionalID = d.NullableString()
	r.TransactionTimeoutMs = d.Int32()
	if v >= 3 {
		r.ProducerID = d.Int64()
		r.ProducerEpoch = d.Int16()
	}
	d.Tags()
	return d.Err()
}

// InitProducerIdResponse carries the assigned producer ID and epoch.
type InitProducerIdResponse struct {
	ThrottleTimeMs int32
	ErrorCode      int16
	ProducerID     int64
	ProducerEpoch  int16
}

func (*InitProducerIdResponse) Key() ApiKey       { return InitProducerId }
func (r *InitProducerIdResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *InitProducerIdResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.Int16(r.ErrorCode)
	e.Int64(r.ProducerID)
	e.Int16(r.ProducerEpoch)
	e.Tags()
}

func (r *InitProducerIdResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.ErrorCode = d.Int16()
	r.ProducerID = d.Int64()
	r.ProducerEpoch = d.Int16()
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(InitProducerIdRequest) }) }
