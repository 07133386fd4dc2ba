package protocol

// LeaveGroupRequest removes members from a group. Versions 0-2 name a single
// MemberID; version 3+ (KIP-345) a batch of Members. The caller fills the
// field of the version it sends.
type LeaveGroupRequest struct {
	GroupID  string
	MemberID string                    // v0-2
	Members  []LeaveGroupRequestMember // v3+
}

// LeaveGroupRequestMember identifies one leaving member (v3+).
type LeaveGroupRequestMember struct {
	MemberID        string
	GroupInstanceID *string
	Reason          *string // v5+
}

func (*LeaveGroupRequest) Key() ApiKey           { return LeaveGroup }
func (*LeaveGroupRequest) MinVersion() int16     { return 0 }
func (*LeaveGroupRequest) MaxVersion() int16     { return 5 }
func (*LeaveGroupRequest) FlexibleFrom() int16   { return 4 }
func (*LeaveGroupRequest) NewResponse() Response { return new(LeaveGroupResponse) }

func (r *LeaveGroupRequest) Encode(e *Encoder, v int16) {
	e.String(r.GroupID)
	if v < 3 {
		e.String(r.MemberID)
	} else {
		e.ArrayLen(len(r.Members))
		for i := range r.Members {
			m := &r.Members[i]
			e.String(m.MemberID)
			e.NullableString(m.GroupInstanceID)
			if v >= 5 {
				e.NullableString(m.Reason)
			}
			e.Tags()
		}
	}
	e.Tags()
}

func (r *LeaveGroupRequest) Decode(d *Decoder, v int16) error {
	r.GroupID = d.String()
	if v < 3 {
		r.MemberID = d.String()
	} else if n := d.ArrayLen(); n > 0 {
		r.Members = make([]LeaveGroupRequestMember, n)
		for i := range r.Members {
			m := &r.Members[i]
			m.MemberID = d.String()
			m.GroupInstanceID = d.NullableString()
			if v >= 5 {
				m.Reason = d.NullableString()
			}
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

// LeaveGroupResponse answers LeaveGroup; from v3 with a result per member.
type LeaveGroupResponse struct {
	ThrottleTimeMs int32 // v1+
	ErrorCode      int16
	Members        []LeaveGroupResponseMember // v3+
}

// LeaveGroupResponseMember is the result for one leaving member (v3+).
type LeaveGroupResponseMember struct {
	MemberID        string
	GroupInstanceID *string
	ErrorCode       int16
}

func (*LeaveGroupResponse) Key() ApiKey       { return LeaveGroup }
func (r *LeaveGroupResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *LeaveGroupResponse) Encode(e *Encoder, v int16) {
	if v >= 1 {
		e.Int32(r.ThrottleTimeMs)
	}
	e.Int16(r.ErrorCode)
	if v >= 3 {
		e.ArrayLen(len(r.Members))
		for i := range r.Members {
			m := &r.Members[i]
			e.String(m.MemberID)
			e.NullableString(m.GroupInstanceID)
			e.Int16(m.ErrorCode)
			e.Tags()
		}
	}
	e.Tags()
}

func (r *LeaveGroupResponse) Decode(d *Decoder, v int16) error {
	if v >= 1 {
		r.ThrottleTimeMs = d.Int32()
	}
	r.ErrorCode = d.Int16()
	if v >= 3 {
		if n := d.ArrayLenMin(d.minStruct(2, 2, 0)); n > 0 {
			r.Members = make([]LeaveGroupResponseMember, n)
			for i := range r.Members {
				m := &r.Members[i]
				m.MemberID = d.String()
				m.GroupInstanceID = d.NullableString()
				m.ErrorCode = d.Int16()
				d.Tags()
			}
		}
	}
	d.Tags()
	return d.Err()
}

func init() { registerRequest(func() Request { return new(LeaveGroupRequest) }) }
