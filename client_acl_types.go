package kafka

import (
	"fmt"
	"strings"
)

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
