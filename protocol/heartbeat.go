package protocol

// HeartbeatRequest keeps a group member alive between rebalances.
type HeartbeatRequest struct {
	GroupID         string
	GenerationID    int32
	MemberID        string
	GroupInstanceID *string // v3+
}

func (*HeartbeatRequest) Key() ApiKey           { return Heartbeat }
func (*HeartbeatRequest) MinVersion() int16     { return 0 }
func (*HeartbeatRequest) MaxVersion() int16     { return 4 }
func (*HeartbeatRequest) FlexibleFrom() int16   { return 4 }
func (*HeartbeatRequest) NewResponse() Response { return new(HeartbeatResponse) }

func (r *HeartbeatRequest) Encode(e *Encoder, v int16) {
	e.String(r.GroupID)
	e.Int32(r.GenerationID)
	e.String(r.MemberID)
	if v >= 3 {
		e.NullableString(r.GroupInstanceID)
	}
	e.Tags()
}

func (r *HeartbeatRequest) Decode(d *Decoder, v int16) error {
	r.GroupID = d.String()
	r.GenerationID = d.Int32()
	r.MemberID = d.String()
	if v >= 3 {
		r.GroupInstanceID = d.NullableString()
	}
	d.Tags()
	return d.Err()
}

// HeartbeatResponse reports, through ErrorCode, whether the group is
// rebalancing.
type HeartbeatResponse struct {
	ThrottleTimeMs int32 // v1+
	ErrorCode      int16
}

func (*HeartbeatResponse) Key() ApiKey       { return Heartbeat }
func (r *HeartbeatResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *HeartbeatResponse) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.Int16(r.ErrorCode)
	e.Tags()
}

func (r *HeartbeatResponse) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	r.ErrorCode = d.Int16()
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(HeartbeatRequest) }) }
