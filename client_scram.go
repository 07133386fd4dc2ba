package kafka

import (
	"context"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// ScramMechanism is a SCRAM hash function, by Kafka's wire code.
type ScramMechanism int8

const (
	ScramMechanismUnknown ScramMechanism = 0
	ScramMechanismSha256  ScramMechanism = 1 // SCRAM-SHA-256
	ScramMechanismSha512  ScramMechanism = 2 // SCRAM-SHA-512
)

// DescribeUserScramCredentialsRequest asks the cluster which SCRAM
// credentials users have.
type DescribeUserScramCredentialsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Users to describe; none describes every user that has credentials.
	Users []UserScramCredentialsUser
}

// UserScramCredentialsUser names a user.
type UserScramCredentialsUser struct {
	Name string
}

// DescribeUserScramCredentialsResponse is the cluster's answer to a
// DescribeUserScramCredentialsRequest.
type DescribeUserScramCredentialsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the broker's error for the whole request, or nil. Test it
	// with errors.Is against kafka.Error values.
	Error error

	// Results holds one entry per user.
	Results []DescribeUserScramCredentialsResponseResult
}

// DescribeUserScramCredentialsResponseResult is one user's credentials, or
// the error describing them (ResourceNotFound for a user without any).
type DescribeUserScramCredentialsResponseResult struct {
	User            string
	CredentialInfos []DescribeUserScramCredentialsCredentialInfo
	Error           error
}

// DescribeUserScramCredentialsCredentialInfo is one credential of a user:
// its mechanism and iteration count (never the secret itself).
type DescribeUserScramCredentialsCredentialInfo struct {
	Mechanism  ScramMechanism
	Iterations int
}

// AlterUserScramCredentialsRequest asks the cluster to delete and to add or
// replace SCRAM credentials.
type AlterUserScramCredentialsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Deletions are the credentials to delete.
	Deletions []UserScramCredentialsDeletion

	// Upsertions are the credentials to add or replace.
	Upsertions []UserScramCredentialsUpsertion
}

// UserScramCredentialsDeletion names a user's credential for one mechanism.
type UserScramCredentialsDeletion struct {
	Name      string
	Mechanism ScramMechanism
}

// UserScramCredentialsUpsertion is a user's credential for one mechanism.
// The password never goes to the broker: SaltedPassword is the RFC 5802
// SaltedPassword, PBKDF2 with the mechanism's HMAC over the password, Salt
// and Iterations, computed by the caller. Kafka requires at least 4096
// iterations for SCRAM-SHA-256 and SCRAM-SHA-512.
type UserScramCredentialsUpsertion struct {
	Name           string
	Mechanism      ScramMechanism
	Iterations     int
	Salt           []byte
	SaltedPassword []byte
}

// AlterUserScramCredentialsResponse is the cluster's answer to an
// AlterUserScramCredentialsRequest.
type AlterUserScramCredentialsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Results holds one entry per user named in the request.
	Results []AlterUserScramCredentialsResponseUser
}

// AlterUserScramCredentialsResponseUser is the outcome for one user.
type AlterUserScramCredentialsResponseUser struct {
	User  string
	Error error
}

// DescribeUserScramCredentials lists users' SCRAM credentials. The request
// goes to the controller. Errors the broker reports, for the request or a
// user, are in the response; the method's error means the request failed.
func (c *Client) DescribeUserScramCredentials(ctx context.Context, req *DescribeUserScramCredentialsRequest) (*DescribeUserScramCredentialsResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeUserScramCredentials: nil request")
	}
	m := &protocol.DescribeUserScramCredentialsRequest{}
	if len(req.Users) > 0 {
		m.Users = make([]string, len(req.Users))
		for i, u := range req.Users {
			m.Users[i] = u.Name
		}
	}
	r, err := responseAs[*protocol.DescribeUserScramCredentialsResponse](c.sendToController(ctx, req.Addr, m))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeUserScramCredentials: %w", err)
	}
	resp := &DescribeUserScramCredentialsResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Error:    makeError(r.ErrorCode, deref(r.ErrorMessage)),
		Results:  make([]DescribeUserScramCredentialsResponseResult, len(r.Results)),
	}
	for i, res := range r.Results {
		out := DescribeUserScramCredentialsResponseResult{
			User:            res.User,
			CredentialInfos: make([]DescribeUserScramCredentialsCredentialInfo, len(res.CredentialInfos)),
			Error:           makeError(res.ErrorCode, deref(res.ErrorMessage)),
		}
		for j, ci := range res.CredentialInfos {
			out.CredentialInfos[j] = DescribeUserScramCredentialsCredentialInfo{
				Mechanism:  ScramMechanism(ci.Mechanism),
				Iterations: int(ci.Iterations),
			}
		}
		resp.Results[i] = out
	}
	return resp, nil
}

// AlterUserScramCredentials deletes and upserts SCRAM credentials. The
// request goes to the controller. Errors for one user are in the response;
// the method's error means the request as a whole failed.
func (c *Client) AlterUserScramCredentials(ctx context.Context, req *AlterUserScramCredentialsRequest) (*AlterUserScramCredentialsResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("kafka.(*Client).AlterUserScramCredentials: nil request")
	}
	m := &protocol.AlterUserScramCredentialsRequest{}
	if len(req.Deletions) > 0 {
		m.Deletions = make([]protocol.AlterUserScramCredentialsRequestDeletion, len(req.Deletions))
		for i, del := range req.Deletions {
			m.Deletions[i] = protocol.AlterUserScramCredentialsRequestDeletion{Name: del.Name, Mechanism: int8(del.Mechanism)}
		}
	}
	if len(req.Upsertions) > 0 {
		m.Upsertions = make([]protocol.AlterUserScramCredentialsRequestUpsertion, len(req.Upsertions))
		for i, u := range req.Upsertions {
			// An int wider than the wire's int32 must not wrap into a
			// different, possibly valid, count.
			if u.Iterations < 0 || u.Iterations > math.MaxInt32 {
				return nil, fmt.Errorf("kafka.(*Client).AlterUserScramCredentials: user %q: %d iterations is out of range", u.Name, u.Iterations)
			}
			m.Upsertions[i] = protocol.AlterUserScramCredentialsRequestUpsertion{
				Name:           u.Name,
				Mechanism:      int8(u.Mechanism),
				Iterations:     int32(u.Iterations),
				Salt:           u.Salt,
				SaltedPassword: u.SaltedPassword,
			}
		}
	}
	r, err := responseAs[*protocol.AlterUserScramCredentialsResponse](c.sendToController(ctx, req.Addr, m))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).AlterUserScramCredentials: %w", err)
	}
	resp := &AlterUserScramCredentialsResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Results:  make([]AlterUserScramCredentialsResponseUser, len(r.Results)),
	}
	for i, res := range r.Results {
		resp.Results[i] = AlterUserScramCredentialsResponseUser{User: res.User, Error: makeError(res.ErrorCode, deref(res.ErrorMessage))}
	}
	return resp, nil
}
