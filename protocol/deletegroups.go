package protocol

// DeleteGroups removes empty consumer groups (their committed offsets
// included). Each group must be sent to its own coordinator.
const DeleteGroups ApiKey = 42

// DeleteGroupsRequest names the groups to delete.
type DeleteGroupsRequest struct {
	GroupsNames []string
}

func (*DeleteGroupsRequest) Key() ApiKey           { return DeleteGroups }
func (*DeleteGroupsRequest) MinVersion() int16     { return 0 }
func (*DeleteGroupsRequest) MaxVersion() int16     { return 2 }
func (*DeleteGroupsRequest) FlexibleFrom() int16   { return 2 }
func (*DeleteGroupsRequest) NewResponse() Response { return new(DeleteGroupsResponse) }

func (r *DeleteGroupsRequest) Encode(e *Encoder, v int16) {
	e.StringArray(r.GroupsNames)
	e.Tags()
}

func (r *DeleteGroupsRequest) Decode(d *Decoder, v int16) error {
	r.GroupsNames = d.StringArray()
	d.Tags()
	return d.Err()
}

// DeleteGroupsResponse carries one result per group.
type DeleteGroupsResponse struct {
	ThrottleTimeMs int32
	Results        []DeleteGroupsResponseResult
}

// DeleteGroupsResponseResult is the outcome for one group.
type DeleteGroupsResponseResult struct {
	GroupID   string
	ErrorCode int16
}

func (*DeleteGroupsResponse) Key() ApiKey       { return DeleteGroups }
func (r *DeleteGroupsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *DeleteGroupsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	e.ArrayLen(len(r.Results))
	for i := range r.Results {
		g := &r.Results[i]
		e.String(g.GroupID)
		e.Int16(g.ErrorCode)
		e.Tags()
	}
	e.Tags()
}

func (r *DeleteGroupsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	if n := d.ArrayLenMin(d.minStruct(2, 1, 0)); n > 0 {
		r.Results = make([]DeleteGroupsResponseResult, n)
		for i := range r.Results {
			g := &r.Results[i]
			g.GroupID = d.String()
			g.ErrorCode = d.Int16()
			d.Tags()
		}
	}
	d.Tags()
	return d.Err()
}

func init() {
	// message.go's name table is shared; this file alone carries
	// DeleteGroups.
	apiNames[DeleteGroups] = "DeleteGroups"
	registerRequest(func() Request { return new(DeleteGroupsRequest) })
}
