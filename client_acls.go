package kafka

import (
	"context"
	"fmt"
	"net"
	"strings"
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

// ResourceType identifies the kind of resource an ACL or a configuration
// applies to. The values are Kafka's wire codes.
type ResourceType int8

const (
	ResourceTypeUnknown ResourceType = 0
	ResourceTypeAny     ResourceType = 1
	ResourceTypeTopic   ResourceType = 2
	ResourceTypeGroup   ResourceType = 3
	// Kafka uses the same code for a broker (in the config APIs) and the
	// cluster (in the ACL APIs).
	ResourceTypeBroker          ResourceType = 4
	ResourceTypeCluster         ResourceType = 4
	ResourceTypeTransactionalID ResourceType = 5
	ResourceTypeDelegationToken ResourceType = 6
)

// String returns the resource type's name; codes this package does not know
// are "Unknown". Code 4 prints as "Cluster".
func (rt ResourceType) String() string {
	switch rt {
	case ResourceTypeAny:
		return "Any"
	case ResourceTypeTopic:
		return "Topic"
	case ResourceTypeGroup:
		return "Group"
	case ResourceTypeCluster:
		return "Cluster"
	case ResourceTypeTransactionalID:
		return "Transactionalid"
	case ResourceTypeDelegationToken:
		return "Delegationtoken"
	default:
		return "Unknown"
	}
}

// MarshalText encodes the resource type as its name.
func (rt ResourceType) MarshalText() ([]byte, error) {
	return []byte(rt.String()), nil
}

// UnmarshalText parses a resource type name, ignoring case. An unknown name
// leaves ResourceTypeUnknown and returns an error.
func (rt *ResourceType) UnmarshalText(text []byte) error {
	name := strings.ToLower(string(text))
	switch name {
	case "unknown":
		*rt = ResourceTypeUnknown
	case "any":
		*rt = ResourceTypeAny
	case "topic":
		*rt = ResourceTypeTopic
	case "group":
		*rt = ResourceTypeGroup
	case "broker":
		*rt = ResourceTypeBroker
	case "cluster":
		*rt = ResourceTypeCluster
	case "transactionalid":
		*rt = ResourceTypeTransactionalID
	case "delegationtoken":
		*rt = ResourceTypeDelegationToken
	default:
		*rt = ResourceTypeUnknown
		return fmt.Errorf("cannot parse %s as a ResourceType", name)
	}
	return nil
}

// PatternType says how an ACL's resource name is matched.
type PatternType int8

const (
	// PatternTypeUnknown stands for a pattern type this package does not know.
	PatternTypeUnknown PatternType = 0
	// PatternTypeAny, in a filter, matches ACLs of every pattern type.
	PatternTypeAny PatternType = 1
	// PatternTypeMatch, in a filter, matches the ACLs that would apply to the
	// named resource: literal, prefixed and wildcard ones.
	PatternTypeMatch PatternType = 2
	// PatternTypeLiteral: the resource name is the full name (or "*").
	PatternTypeLiteral PatternType = 3
	// PatternTypePrefixed: the resource name is a prefix of the names it
	// covers.
	PatternTypePrefixed PatternType = 4
)

// String returns the pattern type's name; unknown codes are "Unknown".
func (pt PatternType) String() string {
	switch pt {
	case PatternTypeAny:
		return "Any"
	case PatternTypeMatch:
		return "Match"
	case PatternTypeLiteral:
		return "Literal"
	case PatternTypePrefixed:
		return "Prefixed"
	default:
		return "Unknown"
	}
}

// MarshalText encodes the pattern type as its name.
func (pt PatternType) MarshalText() ([]byte, error) {
	return []byte(pt.String()), nil
}

// UnmarshalText parses a pattern type name, ignoring case. An unknown name
// leaves PatternTypeUnknown and returns an error.
func (pt *PatternType) UnmarshalText(text []byte) error {
	name := strings.ToLower(string(text))
	switch name {
	case "unknown":
		*pt = PatternTypeUnknown
	case "any":
		*pt = PatternTypeAny
	case "match":
		*pt = PatternTypeMatch
	case "literal":
		*pt = PatternTypeLiteral
	case "prefixed":
		*pt = PatternTypePrefixed
	default:
		*pt = PatternTypeUnknown
		return fmt.Errorf("cannot parse %s as a PatternType", name)
	}
	return nil
}

// ACLPermissionType says whether an ACL allows or denies its operation.
type ACLPermissionType int8

const (
	ACLPermissionTypeUnknown ACLPermissionType = 0
	ACLPermissionTypeAny     ACLPermissionType = 1
	ACLPermissionTypeDeny    ACLPermissionType = 2
	ACLPermissionTypeAllow   ACLPermissionType = 3
)

// String returns the permission type's name; unknown codes are "Unknown".
func (apt ACLPermissionType) String() string {
	switch apt {
	case ACLPermissionTypeAny:
		return "Any"
	case ACLPermissionTypeDeny:
		return "Deny"
	case ACLPermissionTypeAllow:
		return "Allow"
	default:
		return "Unknown"
	}
}

// MarshalText encodes the permission type as its name.
func (apt ACLPermissionType) MarshalText() ([]byte, error) {
	return []byte(apt.String()), nil
}

// UnmarshalText parses a permission type name, ignoring case. An unknown
// name leaves ACLPermissionTypeUnknown and returns an error.
func (apt *ACLPermissionType) UnmarshalText(text []byte) error {
	name := strings.ToLower(string(text))
	switch name {
	case "unknown":
		*apt = ACLPermissionTypeUnknown
	case "any":
		*apt = ACLPermissionTypeAny
	case "deny":
		*apt = ACLPermissionTypeDeny
	case "allow":
		*apt = ACLPermissionTypeAllow
	default:
		*apt = ACLPermissionTypeUnknown
		return fmt.Errorf("cannot parse %s as an ACLPermissionType", name)
	}
	return nil
}

// ACLOperationType is the operation an ACL allows or denies.
type ACLOperationType int8

const (
	ACLOperationTypeUnknown         ACLOperationType = 0
	ACLOperationTypeAny             ACLOperationType = 1
	ACLOperationTypeAll             ACLOperationType = 2
	ACLOperationTypeRead            ACLOperationType = 3
	ACLOperationTypeWrite           ACLOperationType = 4
	ACLOperationTypeCreate          ACLOperationType = 5
	ACLOperationTypeDelete          ACLOperationType = 6
	ACLOperationTypeAlter           ACLOperationType = 7
	ACLOperationTypeDescribe        ACLOperationType = 8
	ACLOperationTypeClusterAction   ACLOperationType = 9
	ACLOperationTypeDescribeConfigs ACLOperationType = 10
	ACLOperationTypeAlterConfigs    ACLOperationType = 11
	ACLOperationTypeIdempotentWrite ACLOperationType = 12
)

// aclOperationNames holds the names of the operation codes 0..12, in order.
var aclOperationNames = [...]string{
	"Unknown", "Any", "All", "Read", "Write", "Create", "Delete", "Alter",
	"Describe", "ClusterAction", "DescribeConfigs", "AlterConfigs", "IdempotentWrite",
}

// String returns the operation's name; unknown codes are "Unknown".
func (aot ACLOperationType) String() string {
	if aot < 0 || int(aot) >= len(aclOperationNames) {
		return aclOperationNames[0]
	}
	return aclOperationNames[aot]
}

// MarshalText encodes the operation as its name.
func (aot ACLOperationType) MarshalText() ([]byte, error) {
	return []byte(aot.String()), nil
}

// UnmarshalText parses an operation name, ignoring case. An unknown name
// leaves ACLOperationTypeUnknown and returns an error.
func (aot *ACLOperationType) UnmarshalText(text []byte) error {
	name := strings.ToLower(string(text))
	for code, known := range aclOperationNames {
		if strings.ToLower(known) == name {
			*aot = ACLOperationType(code)
			return nil
		}
	}
	*aot = ACLOperationTypeUnknown
	return fmt.Errorf("cannot parse %s as an ACLOperationType", name)
}
