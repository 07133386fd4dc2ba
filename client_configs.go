package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// DescribeConfigsRequest asks for the configuration of topics and brokers.
type DescribeConfigsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Resources are the topics and brokers to describe.
	Resources []DescribeConfigRequestResource

	// IncludeSynonyms asks for every source a key's value could come from
	// (topic, broker, default), in order of precedence.
	IncludeSynonyms bool

	// IncludeDocumentation asks for each key's documentation (brokers from
	// Kafka 2.6 on).
	IncludeDocumentation bool
}

// DescribeConfigRequestResource is one resource of a
// DescribeConfigsRequest.
type DescribeConfigRequestResource struct {
	// ResourceType is ResourceTypeTopic or ResourceTypeBroker.
	ResourceType ResourceType

	// ResourceName is the topic's name or the broker's id in decimal (empty
	// for the defaults shared by every broker).
	ResourceName string

	// ConfigNames are the keys to describe; nil means every key.
	ConfigNames []string
}

// DescribeConfigsResponse is the cluster's answer to a
// DescribeConfigsRequest.
type DescribeConfigsResponse struct {
	// Throttle is how long the broker held the request back for quotas.
	Throttle time.Duration

	// Resources holds one result per resource, in the request's order.
	Resources []DescribeConfigResponseResource
}

// DescribeConfigResponseResource is the configuration of one resource.
type DescribeConfigResponseResource struct {
	// ResourceType is the resource's type code (see ResourceType).
	ResourceType int8

	// ResourceName is the topic's name or the broker's id.
	ResourceName string

	// Error is the kafka.Error describing this resource failed with, or
	// nil.
	Error error

	// ConfigEntries are the resource's configuration keys.
	ConfigEntries []DescribeConfigResponseConfigEntry
}

// DescribeConfigResponseConfigEntry is one configuration key.
type DescribeConfigResponseConfigEntry struct {
	ConfigName string
	// ConfigValue is empty for sensitive keys and keys without a value.
	ConfigValue string
	ReadOnly    bool

	// IsDefault only came in version 0 of the API, which current brokers
	// no longer speak; it is always false. ConfigSource 5 (DEFAULT_CONFIG)
	// says the same.
	IsDefault bool

	// ConfigSource says where the value comes from: 1 topic, 2 dynamic
	// broker, 3 dynamic default broker, 4 static broker, 5 default,
	// 6 dynamic broker logger.
	ConfigSource int8

	IsSensitive bool

	// ConfigSynonyms are filled when the request's IncludeSynonyms is set.
	ConfigSynonyms []DescribeConfigResponseConfigSynonym

	// ConfigType is the value's type (1 boolean, 2 string, 3 int, 4 short,
	// 5 long, 6 double, 7 list, 8 class, 9 password), with
	// IncludeDocumentation on brokers that know it.
	ConfigType int8

	// ConfigDocumentation is filled when the request's IncludeDocumentation
	// is set.
	ConfigDocumentation string
}

// DescribeConfigResponseConfigSynonym is one source of a key's value.
type DescribeConfigResponseConfigSynonym struct {
	ConfigName   string
	ConfigValue  string
	ConfigSource int8
}

// DescribeConfigs reads the configuration of topics and brokers. Broker
// resources are asked of the broker they name, the others of the
// controller. A resource that fails has its own Error; the method's error
// is for the request as a whole.
func (c *Client) DescribeConfigs(ctx context.Context, req *DescribeConfigsRequest) (*DescribeConfigsResponse, error) {
	if req == nil {
		return nil, errors.New("describing configs: nil request")
	}
	res := req.Resources
	calls, err := clientConfigsCalls[*protocol.DescribeConfigsResponse](ctx, c, req.Addr, len(res),
		func(i int) (int8, string) { return int8(res[i].ResourceType), res[i].ResourceName },
		func(idx []int) protocol.Request {
			preq := &protocol.DescribeConfigsRequest{
				IncludeSynonyms:      req.IncludeSynonyms,
				IncludeDocumentation: req.IncludeDocumentation,
			}
			for _, i := range idx {
				preq.Resources = append(preq.Resources, protocol.DescribeConfigsRequestResource{
					ResourceType:      int8(res[i].ResourceType),
					ResourceName:      res[i].ResourceName,
					ConfigurationKeys: res[i].ConfigNames,
				})
			}
			return preq
		})
	if err != nil {
		return nil, fmt.Errorf("describing configs: %w", err)
	}

	out := &DescribeConfigsResponse{}
	inOrder := true // every broker answered resource for resource
	for _, call := range calls {
		out.Throttle = max(out.Throttle, clientThrottle(call.resp.ThrottleTimeMs))
		inOrder = inOrder && len(call.resp.Results) == len(call.idx)
	}
	if inOrder {
		out.Resources = make([]DescribeConfigResponseResource, len(res))
	}
	for _, call := range calls {
		for k, r := range call.resp.Results {
			if inOrder {
				out.Resources[call.idx[k]] = clientConfigsDescribed(r)
			} else {
				out.Resources = append(out.Resources, clientConfigsDescribed(r))
			}
		}
	}
	return out, nil
}

func clientConfigsDescribed(r protocol.DescribeConfigsResponseResult) DescribeConfigResponseResource {
	rr := DescribeConfigResponseResource{
		ResourceType:  r.ResourceType,
		ResourceName:  r.ResourceName,
		Error:         makeError(r.ErrorCode, deref(r.ErrorMessage)),
		ConfigEntries: make([]DescribeConfigResponseConfigEntry, len(r.Configs)),
	}
	for j, cfg := range r.Configs {
		e := DescribeConfigResponseConfigEntry{
			ConfigName:          cfg.Name,
			ConfigValue:         deref(cfg.Value),
			ReadOnly:            cfg.ReadOnly,
			ConfigSource:        cfg.ConfigSource,
			IsSensitive:         cfg.IsSensitive,
			ConfigSynonyms:      make([]DescribeConfigResponseConfigSynonym, len(cfg.Synonyms)),
			ConfigType:          cfg.ConfigType,
			ConfigDocumentation: deref(cfg.Documentation),
		}
		for k, s := range cfg.Synonyms {
			e.ConfigSynonyms[k] = DescribeConfigResponseConfigSynonym{
				ConfigName:   s.Name,
				ConfigValue:  deref(s.Value),
				ConfigSource: s.Source,
			}
		}
		rr.ConfigEntries[j] = e
	}
	return rr
}

// AlterConfigsRequest replaces the dynamic configuration of topics and
// brokers: the keys a resource leaves out go back to their defaults.
type AlterConfigsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Resources are the topics and brokers to configure.
	Resources []AlterConfigRequestResource

	// ValidateOnly makes the brokers check the new configuration without
	// applying it.
	ValidateOnly bool
}

// AlterConfigRequestResource is one resource of an AlterConfigsRequest.
type AlterConfigRequestResource struct {
	// ResourceType is ResourceTypeTopic or ResourceTypeBroker.
	ResourceType ResourceType

	// ResourceName is the topic's name or the broker's id in decimal (empty
	// for the defaults shared by every broker).
	ResourceName string

	// Configs is the resource's whole new dynamic configuration.
	Configs []AlterConfigRequestConfig
}

// AlterConfigRequestConfig is one key and value.
type AlterConfigRequestConfig struct {
	Name  string
	Value string
}

// AlterConfigsResponse is the cluster's answer to an AlterConfigsRequest.
type AlterConfigsResponse struct {
	// Throttle is how long the broker held the request back for quotas.
	Throttle time.Duration

	// Errors has one entry per resource of the answer: nil when its
	// configuration was changed, else a kafka.Error (possibly wrapped with
	// the broker's message; test with errors.Is).
	Errors map[AlterConfigsResponseResource]error
}

// AlterConfigsResponseResource names a resource in
// AlterConfigsResponse.Errors.
type AlterConfigsResponseResource struct {
	Type int8
	Name string
}

// AlterConfigs replaces the dynamic configuration of topics and brokers.
// Broker resources go to the broker they name, the others to the
// controller. Failures of single resources are in the response's Errors;
// the error is for the request as a whole.
func (c *Client) AlterConfigs(ctx context.Context, req *AlterConfigsRequest) (*AlterConfigsResponse, error) {
	if req == nil {
		return nil, errors.New("altering configs: nil request")
	}
	res := req.Resources
	calls, err := clientConfigsCalls[*protocol.AlterConfigsResponse](ctx, c, req.Addr, len(res),
		func(i int) (int8, string) { return int8(res[i].ResourceType), res[i].ResourceName },
		func(idx []int) protocol.Request {
			preq := &protocol.AlterConfigsRequest{ValidateOnly: req.ValidateOnly}
			for _, i := range idx {
				pr := protocol.AlterConfigsRequestResource{
					ResourceType: int8(res[i].ResourceType),
					ResourceName: res[i].ResourceName,
				}
				for _, cfg := range res[i].Configs {
					v := cfg.Value
					pr.Configs = append(pr.Configs, protocol.AlterConfigsRequestConfig{Name: cfg.Name, Value: &v})
				}
				preq.Resources = append(preq.Resources, pr)
			}
			return preq
		})
	if err != nil {
		return nil, fmt.Errorf("altering configs: %w", err)
	}

	out := &AlterConfigsResponse{Errors: map[AlterConfigsResponseResource]error{}}
	for _, call := range calls {
		resp := call.resp
		out.Throttle = max(out.Throttle, clientThrottle(resp.ThrottleTimeMs))
		for _, r := range resp.Responses {
			key := AlterConfigsResponseResource{Type: r.ResourceType, Name: r.ResourceName}
			out.Errors[key] = makeError(r.ErrorCode, deref(r.ErrorMessage))
		}
	}
	return out, nil
}

// ConfigOperation says how IncrementalAlterConfigs changes a key.
type ConfigOperation int8

const (
	// ConfigOperationSet sets the key to the value.
	ConfigOperationSet ConfigOperation = 0
	// ConfigOperationDelete removes the key, which goes back to its
	// default.
	ConfigOperationDelete ConfigOperation = 1
	// ConfigOperationAppend adds the value to a list-valued key.
	ConfigOperationAppend ConfigOperation = 2
	// ConfigOperationSubtract removes the value from a list-valued key.
	ConfigOperationSubtract ConfigOperation = 3
)

// IncrementalAlterConfigsRequest changes single configuration keys of
// topics and brokers, leaving the others as they are.
type IncrementalAlterConfigsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Resources are the topics and brokers to change.
	Resources []IncrementalAlterConfigsRequestResource

	// ValidateOnly makes the brokers check the changes without applying
	// them.
	ValidateOnly bool
}

// IncrementalAlterConfigsRequestResource is one resource of an
// IncrementalAlterConfigsRequest.
type IncrementalAlterConfigsRequestResource struct {
	// ResourceType is ResourceTypeTopic or ResourceTypeBroker.
	ResourceType ResourceType

	// ResourceName is the topic's name or the broker's id in decimal (empty
	// for the defaults shared by every broker).
	ResourceName string

	// Configs are the changes to make.
	Configs []IncrementalAlterConfigsRequestConfig
}

// IncrementalAlterConfigsRequestConfig is one change of one key.
type IncrementalAlterConfigsRequestConfig struct {
	// Name is the key.
	Name string

	// Value is the value to set, append or subtract (ignored by deletions).
	Value string

	// ConfigOperation is what to do with the key.
	ConfigOperation ConfigOperation
}

// IncrementalAlterConfigsResponse is the cluster's answer to an
// IncrementalAlterConfigsRequest.
type IncrementalAlterConfigsResponse struct {
	// Resources holds one result per resource of the answer.
	Resources []IncrementalAlterConfigsResponseResource
}

// IncrementalAlterConfigsResponseResource is the result for one resource.
type IncrementalAlterConfigsResponseResource struct {
	// Error is the kafka.Error the resource's changes failed with, or nil.
	Error error

	// ResourceType and ResourceName name the resource.
	ResourceType ResourceType
	ResourceName string
}

// IncrementalAlterConfigs changes single configuration keys of topics and
// brokers. Broker resources go to the broker they name, the others to the
// controller. Failures of single resources are in the response; the error
// is for the request as a whole.
func (c *Client) IncrementalAlterConfigs(ctx context.Context, req *IncrementalAlterConfigsRequest) (*IncrementalAlterConfigsResponse, error) {
	if req == nil {
		return nil, errors.New("altering configs incrementally: nil request")
	}
	res := req.Resources
	calls, err := clientConfigsCalls[*protocol.IncrementalAlterConfigsResponse](ctx, c, req.Addr, len(res),
		func(i int) (int8, string) { return int8(res[i].ResourceType), res[i].ResourceName },
		func(idx []int) protocol.Request {
			preq := &protocol.IncrementalAlterConfigsRequest{ValidateOnly: req.ValidateOnly}
			for _, i := range idx {
				pr := protocol.IncrementalAlterConfigsRequestResource{
					ResourceType: int8(res[i].ResourceType),
					ResourceName: res[i].ResourceName,
				}
				for _, cfg := range res[i].Configs {
					v := cfg.Value
					pr.Configs = append(pr.Configs, protocol.IncrementalAlterConfigsRequestConfig{
						Name:            cfg.Name,
						ConfigOperation: int8(cfg.ConfigOperation),
						Value:           &v,
					})
				}
				preq.Resources = append(preq.Resources, pr)
			}
			return preq
		})
	if err != nil {
		return nil, fmt.Errorf("altering configs incrementally: %w", err)
	}

	out := &IncrementalAlterConfigsResponse{}
	for _, call := range calls {
		resp := call.resp
		for _, r := range resp.Responses {
			out.Resources = append(out.Resources, IncrementalAlterConfigsResponseResource{
				Error:        makeError(r.ErrorCode, deref(r.ErrorMessage)),
				ResourceType: ResourceType(r.ResourceType),
				ResourceName: r.ResourceName,
			})
		}
	}
	return out, nil
}

// clientConfigsBrokerLogger is the config resource type of a broker's
// loggers, which like a broker's own configuration only that broker
// serves.
const clientConfigsBrokerLogger int8 = 8

// clientConfigsCall is one request of a config method: the resources (by
// index in the method's request) sent together to one broker, and the
// answer.
type clientConfigsCall[T protocol.Response] struct {
	broker int32 // -1: any broker (the cluster names no controller)
	idx    []int
	resp   T
}

// clientConfigsCalls sends the n resources of a config request where they
// must go: those of one broker (named by its id) to that broker, all the
// others together to the controller (with the controller's own, if any).
// resource describes resource i, and build makes the request for a set of
// them. The calls are made one after the other, in the order of each
// destination's first resource.
func clientConfigsCalls[T protocol.Response](ctx context.Context, c *Client, reqAddr net.Addr, n int,
	resource func(i int) (int8, string), build func(idx []int) protocol.Request) ([]clientConfigsCall[T], error) {
	addr, err := c.address(reqAddr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()

	// Check the names before asking anything of the cluster.
	targets := make([]int32, n)
	for i := range targets {
		typ, name := resource(i)
		targets[i] = -1
		if (typ == int8(ResourceTypeBroker) || typ == clientConfigsBrokerLogger) && name != "" {
			id, err := strconv.ParseInt(name, 10, 32)
			if err != nil || id < 0 {
				return nil, fmt.Errorf("broker resource %q: not a broker id", name)
			}
			targets[i] = int32(id)
		}
	}

	cl, err := c.metadata(ctx, addr, []string{})
	if err != nil {
		return nil, err
	}
	controller := int32(-1)
	if _, known := cl.brokers[cl.controller]; known {
		controller = cl.controller
	}

	var calls []clientConfigsCall[T]
	pos := map[int32]int{}
	for i, id := range targets {
		if id < 0 {
			id = controller
		}
		k, ok := pos[id]
		if !ok {
			k = len(calls)
			pos[id] = k
			calls = append(calls, clientConfigsCall[T]{broker: id})
		}
		calls[k].idx = append(calls[k].idx, i)
	}
	if len(calls) == 0 {
		// No resources: the controller still answers, with nothing.
		calls = append(calls, clientConfigsCall[T]{broker: controller})
	}

	for k := range calls {
		call := &calls[k]
		req := build(call.idx)
		if call.broker < 0 {
			// No controller among the brokers: any broker forwards it.
			call.resp, err = responseAs[T](c.roundTrip(ctx, addr, req))
		} else {
			call.resp, err = responseAs[T](c.toBroker(ctx, cl, call.broker, req))
		}
		if err != nil {
			return nil, err
		}
	}
	return calls, nil
}
