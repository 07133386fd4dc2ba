package protocol

// AlterConfigsRequest replaces the whole dynamic configuration of topics
// and brokers: keys a resource's entry leaves out fall back to their
// defaults. IncrementalAlterConfigs changes single keys instead.
type AlterConfigsRequest struct {
	Resources    []AlterConfigsRequestResource
	ValidateOnly bool
}

type AlterConfigsRequestResource struct {
	ResourceType int8 // 2 topic, 4 broker, 8 broker logger
	ResourceName string
	Configs      []AlterConfigsRequestConfig
}

type AlterConfigsRequestConfig struct {
	Name  string
	Value *string
}

func (*AlterConfigsRequest) Key() ApiKey           { return AlterConfigs }
func (*AlterConfigsRequest) MinVersion() int16     { return 0 }
func (*AlterConfigsRequest) MaxVersion() int16     { return 2 }
func (*AlterConfigsRequest) FlexibleFrom() int16   { return 2 }
func (*AlterConfigsRequest) NewResponse() Response { return new(AlterConfigsResponse) }

func (r *AlterConfigsRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Resources))
	for _, res := range r.Resources {
		e.Int8(res.ResourceType)
		e.String(res.ResourceName)
		e.ArrayLen(len(res.Configs))
		for _, c := range res.Configs {
			e.String(c.Name)
			e.NullableString(c.Value)
			e.Tags()
		}
		e.Tags()
	}
	e.Bool(r.ValidateOnly)
	e.Tags()
}

func (r *AlterConfigsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(1, 1, 1)); n > 0 {
		r.Resources = make([]AlterConfigsRequestResource, n)
		for i := range r.Resources {
			res := &r.Resources[i]
			res.ResourceType = d.Int8()
			res.ResourceName = d.String()
			if n := d.ArrayLenMin(d.minStruct(0, 2, 0)); n > 0 {
				res.Configs = make([]AlterConfigsRequestConfig, n)
				for j := range res.Configs {
					c := &res.Configs[j]
					c.Name = d.String()
					c.Value = d.NullableString()
					d.Tags()
				}
			}
			d.Tags()
		}
	}
	r.ValidateOnly = d.Bool()
	d.Tags()
	return d.Err()
}

// AlterConfigsResponse holds one result per resource of the request.
type AlterConfigsResponse struct {
	ThrottleTimeMs int32
	Responses      []AlterConfigsResponseResource
}

type AlterConfigsResponseResource struct {
	ErrorCode    int16
	ErrorMessage *string
	ResourceType int8
	ResourceName string
}

func (*AlterConfigsResponse) Key() ApiKey       { return AlterConfigs }
func (r *AlterConfigsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *AlterConfigsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	encodeAlterConfigsResults(e, r.Responses)
	e.Tags()
}

func (r *AlterConfigsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.Responses = decodeAlterConfigsResults(d)
	d.Tags()
	return d.Err()
}

// The per-resource results of AlterConfigs and IncrementalAlterConfigs
// have the same layout at every version.

func encodeAlterConfigsResults(e *Encoder, rs []AlterConfigsResponseResource) {
	e.ArrayLen(len(rs))
	for _, res := range rs {
		e.Int16(res.ErrorCode)
		e.NullableString(res.ErrorMessage)
		e.Int8(res.ResourceType)
		e.String(res.ResourceName)
		e.Tags()
	}
}

func decodeAlterConfigsResults(d *Decoder) []AlterConfigsResponseResource {
	n := d.ArrayLenMin(d.minStruct(2+1, 2, 0))
	if n <= 0 {
		return nil
	}
	rs := make([]AlterConfigsResponseResource, n)
	for i := range rs {
		res := &rs[i]
		res.ErrorCode = d.Int16()
		res.ErrorMessage = d.NullableString()
		res.ResourceType = d.Int8()
		res.ResourceName = d.String()
		d.Tags()
	}
	return rs
}

func init() { registerRequest(func() Request { return new(AlterConfigsRequest) }) }
