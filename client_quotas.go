package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// DescribeClientQuotasRequest asks the cluster for the quotas of the
// entities (users, client ids, IPs) matching every component.
type DescribeClientQuotasRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Components filter the entities, one per entity type.
	Components []DescribeClientQuotasRequestComponent

	// Strict leaves out entities that also have components of types the
	// filter does not name.
	Strict bool
}

// DescribeClientQuotasRequestComponent filters entities of one type.
type DescribeClientQuotasRequestComponent struct {
	// EntityType is "user", "client-id" or "ip".
	EntityType string

	// MatchType is 0 to match the entity named Match, 1 to match the
	// type's default entity and 2 to match any named entity.
	MatchType int8

	// Match is the name for MatchType 0; leave it empty otherwise.
	Match string
}

// DescribeClientQuotasResponse is the cluster's answer to a
// DescribeClientQuotasRequest.
type DescribeClientQuotasResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the broker's error for the whole request, or nil.
	Error error

	// Entries are the matching entities and their quotas.
	Entries []DescribeClientQuotasResponseQuotas
}

// DescribeClientQuotasEntity is one component of a quota entity.
type DescribeClientQuotasEntity struct {
	// EntityType is "user", "client-id" or "ip".
	EntityType string

	// EntityName is the entity's name; empty stands for the type's default
	// entity.
	EntityName string
}

// DescribeClientQuotasValue is one quota of an entity.
type DescribeClientQuotasValue struct {
	// Key is the quota's name, such as "producer_byte_rate".
	Key string

	// Value is the quota's value.
	Value float64
}

// DescribeClientQuotasResponseQuotas is one entity and its quotas.
type DescribeClientQuotasResponseQuotas struct {
	// Entities are the components naming the entity.
	Entities []DescribeClientQuotasEntity

	// Values are the entity's quotas.
	Values []DescribeClientQuotasValue
}

// AlterClientQuotasRequest asks the cluster to set or remove quotas.
type AlterClientQuotasRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Entries are the entities to change and the changes.
	Entries []AlterClientQuotaEntry

	// ValidateOnly checks the changes without making them.
	ValidateOnly bool
}

// AlterClientQuotaEntry is one entity and the changes to its quotas.
type AlterClientQuotaEntry struct {
	// Entities are the components naming the entity.
	Entities []AlterClientQuotaEntity

	// Ops are the changes.
	Ops []AlterClientQuotaOps
}

// AlterClientQuotaEntity is one component of a quota entity.
type AlterClientQuotaEntity struct {
	// EntityType is "user", "client-id" or "ip".
	EntityType string

	// EntityName is the entity's name; empty stands for the type's default
	// entity.
	EntityName string
}

// AlterClientQuotaOps sets or removes one quota.
type AlterClientQuotaOps struct {
	// Key is the quota's name, such as "producer_byte_rate".
	Key string

	// Value is the value to set; ignored when Remove is set.
	Value float64

	// Remove removes the quota instead of setting it.
	Remove bool
}

// AlterClientQuotaResponseQuotas is the outcome for one entity.
type AlterClientQuotaResponseQuotas struct {
	// Error is the broker's error for this entity, or nil.
	Error error

	// Entities are the components naming the entity.
	Entities []AlterClientQuotaEntity
}

// AlterClientQuotasResponse is the cluster's answer to an
// AlterClientQuotasRequest.
type AlterClientQuotasResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Entries holds one outcome per entity of the request.
	Entries []AlterClientQuotaResponseQuotas
}

// DescribeClientQuotas reads client quotas. The request goes to the
// controller. An error the broker reports is in the response's Error; the
// method's error means the request failed.
func (c *Client) DescribeClientQuotas(ctx context.Context, req *DescribeClientQuotasRequest) (*DescribeClientQuotasResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeClientQuotas: nil request")
	}
	m := &protocol.DescribeClientQuotasRequest{
		Components: make([]protocol.DescribeClientQuotasRequestComponent, len(req.Components)),
		Strict:     req.Strict,
	}
	for i, comp := range req.Components {
		m.Components[i] = protocol.DescribeClientQuotasRequestComponent{
			EntityType: comp.EntityType,
			MatchType:  comp.MatchType,
			Match:      clientGroupsNullable(comp.Match),
		}
	}
	r, err := responseAs[*protocol.DescribeClientQuotasResponse](c.sendToController(ctx, req.Addr, m))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeClientQuotas: %w", err)
	}
	resp := &DescribeClientQuotasResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Error:    makeError(r.ErrorCode, deref(r.ErrorMessage)),
		Entries:  make([]DescribeClientQuotasResponseQuotas, len(r.Entries)),
	}
	for i, ent := range r.Entries {
		out := DescribeClientQuotasResponseQuotas{
			Entities: make([]DescribeClientQuotasEntity, len(ent.Entity)),
			Values:   make([]DescribeClientQuotasValue, len(ent.Values)),
		}
		for j, e := range ent.Entity {
			out.Entities[j] = DescribeClientQuotasEntity{EntityType: e.EntityType, EntityName: deref(e.EntityName)}
		}
		for j, v := range ent.Values {
			out.Values[j] = DescribeClientQuotasValue{Key: v.Key, Value: v.Value}
		}
		resp.Entries[i] = out
	}
	return resp, nil
}

// AlterClientQuotas sets or removes client quotas. The request goes to the
// controller. Errors for one entity are in the response; the method's error
// means the request as a whole failed.
func (c *Client) AlterClientQuotas(ctx context.Context, req *AlterClientQuotasRequest) (*AlterClientQuotasResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("kafka.(*Client).AlterClientQuotas: nil request")
	}
	m := &protocol.AlterClientQuotasRequest{
		Entries:      make([]protocol.AlterClientQuotasRequestEntry, len(req.Entries)),
		ValidateOnly: req.ValidateOnly,
	}
	for i, ent := range req.Entries {
		out := protocol.AlterClientQuotasRequestEntry{
			Entity: make([]protocol.ClientQuotasEntity, len(ent.Entities)),
			Ops:    make([]protocol.AlterClientQuotasRequestOp, len(ent.Ops)),
		}
		for j, e := range ent.Entities {
			out.Entity[j] = protocol.ClientQuotasEntity{EntityType: e.EntityType, EntityName: clientGroupsNullable(e.EntityName)}
		}
		for j, op := range ent.Ops {
			out.Ops[j] = protocol.AlterClientQuotasRequestOp{Key: op.Key, Value: op.Value, Remove: op.Remove}
		}
		m.Entries[i] = out
	}
	r, err := responseAs[*protocol.AlterClientQuotasResponse](c.sendToController(ctx, req.Addr, m))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).AlterClientQuotas: %w", err)
	}
	resp := &AlterClientQuotasResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Entries:  make([]AlterClientQuotaResponseQuotas, len(r.Entries)),
	}
	for i, ent := range r.Entries {
		out := AlterClientQuotaResponseQuotas{
			Error:    makeError(ent.ErrorCode, deref(ent.ErrorMessage)),
			Entities: make([]AlterClientQuotaEntity, len(ent.Entity)),
		}
		for j, e := range ent.Entity {
			out.Entities[j] = AlterClientQuotaEntity{EntityType: e.EntityType, EntityName: deref(e.EntityName)}
		}
		resp.Entries[i] = out
	}
	return resp, nil
}
