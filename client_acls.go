package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// CreateACLsRequest asks the cluster to add ACLs.
type CreateACLsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// ACLs are the entries to add.
	ACLs []ACLEntry
}

// CreateACLsResponse is the cluster's answer to a CreateACLsRequest.
type CreateACLsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Errors holds one entry per ACL of the request, in order: nil when the
	// ACL was created, else a kafka.Error (test with errors.Is) possibly
	// wrapped with the broker's message.
	Errors []error
}

// ACLEntry is one ACL: who (Principal, from Host) may or may not
// (PermissionType) do what (Operation) on which resources.
type ACLEntry struct {
	ResourceType        ResourceType
	ResourceName        string
	ResourcePatternType PatternType
	Principal           string
	Host                string
	Operation           ACLOperationType
	PermissionType      ACLPermissionType
}

// DescribeACLsRequest asks the cluster for the ACLs matching a filter.
type DescribeACLsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Filter selects the ACLs to describe.
	Filter ACLFilter
}

// ACLFilter selects ACLs. Empty strings match any value; the Any constants
// of the enum types match every value of their field.
type ACLFilter struct {
	ResourceTypeFilter ResourceType
	ResourceNameFilter string
	// ResourcePatternTypeFilter needs DescribeAcls v1 (Kafka 2.0), the
	// oldest version this package speaks.
	ResourcePatternTypeFilter PatternType
	PrincipalFilter           string
	HostFilter                string
	Operation                 ACLOperationType
	PermissionType            ACLPermissionType
}

// DescribeACLsResponse is the cluster's answer to a DescribeACLsRequest.
type DescribeACLsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the broker's error for the whole request (for instance
	// SecurityDisabled when the cluster has no authorizer), or nil.
	Error error

	// Resources are the matching ACLs, grouped by resource.
	Resources []ACLResource
}

// ACLResource is a resource pattern and the ACLs bound to it.
type ACLResource struct {
	ResourceType ResourceType
	ResourceName string
	PatternType  PatternType
	ACLs         []ACLDescription
}

// ACLDescription is one ACL of an ACLResource.
type ACLDescription struct {
	Principal      string
	Host           string
	Operation      ACLOperationType
	PermissionType ACLPermissionType
}

// DeleteACLsRequest asks the cluster to delete the ACLs matching filters.
type DeleteACLsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Filters select the ACLs to delete; each gets its own result.
	Filters []DeleteACLsFilter
}

// DeleteACLsFilter selects ACLs to delete, with the same rules as
// ACLFilter: empty strings and the Any constants match everything.
type DeleteACLsFilter struct {
	ResourceTypeFilter        ResourceType
	ResourceNameFilter        string
	ResourcePatternTypeFilter PatternType
	PrincipalFilter           string
	HostFilter                string
	Operation                 ACLOperationType
	PermissionType            ACLPermissionType
}

// DeleteACLsResponse is the cluster's answer to a DeleteACLsRequest.
type DeleteACLsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Results holds one entry per filter of the request, in order.
	Results []DeleteACLsResult
}

// DeleteACLsResult is the outcome of one filter: its error, or the ACLs it
// matched.
type DeleteACLsResult struct {
	Error        error
	MatchingACLs []DeleteACLsMatchingACLs
}

// DeleteACLsMatchingACLs is one ACL a filter matched; Error says whether
// deleting it failed.
type DeleteACLsMatchingACLs struct {
	Error               error
	ResourceType        ResourceType
	ResourceName        string
	ResourcePatternType PatternType
	Principal           string
	Host                string
	Operation           ACLOperationType
	PermissionType      ACLPermissionType
}

// CreateACLs adds ACLs. The request goes to the controller. Errors for
// single ACLs are in the response; the method's error means the request as
// a whole failed.
func (c *Client) CreateACLs(ctx context.Context, req *CreateACLsRequest) (*CreateACLsResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("kafka.(*Client).CreateACLs: nil request")
	}
	m := &protocol.CreateAclsRequest{Creations: make([]protocol.CreateAclsRequestCreation, len(req.ACLs))}
	for i, a := range req.ACLs {
		m.Creations[i] = protocol.CreateAclsRequestCreation{
			ResourceType:        int8(a.ResourceType),
			ResourceName:        a.ResourceName,
			ResourcePatternType: int8(a.ResourcePatternType),
			Principal:           a.Principal,
			Host:                a.Host,
			Operation:           int8(a.Operation),
			PermissionType:      int8(a.PermissionType),
		}
	}
	r, err := responseAs[*protocol.CreateAclsResponse](c.sendToController(ctx, req.Addr, m))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).CreateACLs: %w", err)
	}
	resp := &CreateACLsResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Errors:   make([]error, len(r.Results)),
	}
	for i, res := range r.Results {
		resp.Errors[i] = makeError(res.ErrorCode, deref(res.ErrorMessage))
	}
	return resp, nil
}

// DescribeACLs lists the ACLs matching req.Filter. The request goes to the
// controller. An error the broker reports (such as SecurityDisabled) is in
// the response's Error; the method's error means the request failed.
func (c *Client) DescribeACLs(ctx context.Context, req *DescribeACLsRequest) (*DescribeACLsResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeACLs: nil request")
	}
	m := protocol.DescribeAclsRequest(clientACLWireFilter(req.Filter))
	r, err := responseAs[*protocol.DescribeAclsResponse](c.sendToController(ctx, req.Addr, &m))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeACLs: %w", err)
	}
	resp := &DescribeACLsResponse{
		Throttle:  clientThrottle(r.ThrottleTimeMs),
		Error:     makeError(r.ErrorCode, deref(r.ErrorMessage)),
		Resources: make([]ACLResource, len(r.Resources)),
	}
	for i, res := range r.Resources {
		out := ACLResource{
			ResourceType: ResourceType(res.ResourceType),
			ResourceName: res.ResourceName,
			PatternType:  PatternType(res.PatternType),
			ACLs:         make([]ACLDescription, len(res.Acls)),
		}
		for j, a := range res.Acls {
			out.ACLs[j] = ACLDescription{
				Principal:      a.Principal,
				Host:           a.Host,
				Operation:      ACLOperationType(a.Operation),
				PermissionType: ACLPermissionType(a.PermissionType),
			}
		}
		resp.Resources[i] = out
	}
	return resp, nil
}

// DeleteACLs deletes the ACLs matching each filter of req. The request goes
// to the controller. Errors for one filter or one ACL are in the response;
// the method's error means the request as a whole failed.
func (c *Client) DeleteACLs(ctx context.Context, req *DeleteACLsRequest) (*DeleteACLsResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("kafka.(*Client).DeleteACLs: nil request")
	}
	m := &protocol.DeleteAclsRequest{Filters: make([]protocol.DeleteAclsRequestFilter, len(req.Filters))}
	for i, f := range req.Filters {
		m.Filters[i] = clientACLWireFilter(ACLFilter(f))
	}
	r, err := responseAs[*protocol.DeleteAclsResponse](c.sendToController(ctx, req.Addr, m))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DeleteACLs: %w", err)
	}
	resp := &DeleteACLsResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Results:  make([]DeleteACLsResult, len(r.FilterResults)),
	}
	for i, fr := range r.FilterResults {
		out := DeleteACLsResult{
			Error:        makeError(fr.ErrorCode, deref(fr.ErrorMessage)),
			MatchingACLs: make([]DeleteACLsMatchingACLs, len(fr.MatchingAcls)),
		}
		for j, a := range fr.MatchingAcls {
			out.MatchingACLs[j] = DeleteACLsMatchingACLs{
				Error:               makeError(a.ErrorCode, deref(a.ErrorMessage)),
				ResourceType:        ResourceType(a.ResourceType),
				ResourceName:        a.ResourceName,
				ResourcePatternType: PatternType(a.PatternType),
				Principal:           a.Principal,
				Host:                a.Host,
				Operation:           ACLOperationType(a.Operation),
				PermissionType:      ACLPermissionType(a.PermissionType),
			}
		}
		resp.Results[i] = out
	}
	return resp, nil
}

// clientACLWireFilter is a filter's wire form. DescribeAcls carries one at its
// top level and DeleteAcls a list of them, with the same fields: the
// request types convert.
func clientACLWireFilter(f ACLFilter) protocol.DeleteAclsRequestFilter {
	return protocol.DeleteAclsRequestFilter{
		ResourceTypeFilter: int8(f.ResourceTypeFilter),
		ResourceNameFilter: clientGroupsNullable(f.ResourceNameFilter),
		PatternTypeFilter:  int8(f.ResourcePatternTypeFilter),
		PrincipalFilter:    clientGroupsNullable(f.PrincipalFilter),
		HostFilter:         clientGroupsNullable(f.HostFilter),
		Operation:          int8(f.Operation),
		PermissionType:     int8(f.PermissionType),
	}
}
