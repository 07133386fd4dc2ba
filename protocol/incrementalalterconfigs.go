package protocol

// IncrementalAlterConfigs is missing from the table in message.go, which
// this file does not own; it registers its name itself.
const IncrementalAlterConfigs ApiKey = 44

// Operations of IncrementalAlterConfigsRequestConfig (KIP-339).
const (
	ConfigOperationSet      int8 = 0
	ConfigOperationDelete   int8 = 1
	ConfigOperationAppend   int8 = 2 // list-valued keys only
	ConfigOperationSubtract int8 = 3 // list-valued keys only
)

// IncrementalAlterConfigsRequest sets, deletes, appends to or subtracts
// from single configuration keys of topics and brokers, leaving the other
// keys as they are.
type IncrementalAlterConfigsRequest struct {
	Resources    []IncrementalAlterConfigsRequestResource
	ValidateOnly bool
}

type IncrementalAlterConfigsRequestResource struct {
	ResourceType int8 // 2 topic, 4 broker, 8 broker logger
	ResourceName string
	Configs      []IncrementalAlterConfigsRequestConfig
}

type IncrementalAlterConfigsRequestConfig struct {
	Name            string
	ConfigOperation int8
	// Value is null for deletions.
	Value *string
}

func (*IncrementalAlterConfigsRequest) Key() ApiKey         { return IncrementalAlterConfigs }
func (*IncrementalAlterConfigsRequest) MinVersion() int16   { return 0 }
func (*IncrementalAlterConfigsRequest) MaxVersion() int16   { return 1 }
func (*IncrementalAlterConfigsRequest) FlexibleFrom() int16 { return 1 }
func (*IncrementalAlterConfigsRequest) NewResponse() Response {
	return new(IncrementalAlterConfigsResponse)
}

func (r *IncrementalAlterConfigsRequest) Encode(e *Encoder, v int16) {
	e.ArrayLen(len(r.Resources))
	for _, res := range r.Resources {
		e.Int8(res.ResourceType)
		e.String(res.ResourceName)
		e.ArrayLen(len(res.Configs))
		for _, c := range res.Configs {
			e.String(c.Name)
			e.Int8(c.ConfigOperation)
			e.NullableString(c.Value)
			e.Tags()
		}
		e.Tags()
	}
	e.Bool(r.ValidateOnly)
	e.Tags()
}

func (r *IncrementalAlterConfigsRequest) Decode(d *Decoder, v int16) error {
	if n := d.ArrayLenMin(d.minStruct(1, 1, 1)); n > 0 {
		r.Resources = make([]IncrementalAlterConfigsRequestResource, n)
		for i := range r.Resources {
			res := &r.Resources[i]
			res.ResourceType = d.Int8()
			res.ResourceName = d.String()
			if n := d.ArrayLenMin(d.minStruct(1, 2, 0)); n > 0 {
				res.Configs = make([]IncrementalAlterConfigsRequestConfig, n)
				for j := range res.Configs {
					c := &res.Configs[j]
					c.Name = d.String()
					c.ConfigOperation = d.Int8()
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

// IncrementalAlterConfigsResponse holds one result per resource of the
// request, laid out as AlterConfigs' results.
type IncrementalAlterConfigsResponse struct {
	ThrottleTimeMs int32
	Responses      []AlterConfigsResponseResource
}

func (*IncrementalAlterConfigsResponse) Key() ApiKey       { return IncrementalAlterConfigs }
func (r *IncrementalAlterConfigsResponse) Throttle() int32 { return r.ThrottleTimeMs }

func (r *IncrementalAlterConfigsResponse) Encode(e *Encoder, v int16) {
	e.Int32(r.ThrottleTimeMs)
	encodeAlterConfigsResults(e, r.Responses)
	e.Tags()
}

func (r *IncrementalAlterConfigsResponse) Decode(d *Decoder, v int16) error {
	r.ThrottleTimeMs = d.Int32()
	r.Responses = decodeAlterConfigsResults(d)
	d.Tags()
	return d.Err()
}

func init() {
	apiNames[IncrementalAlterConfigs] = "IncrementalAlterConfigs"
	registerRequest(func() Request { return new(IncrementalAlterConfigsRequest) })
}
