package kafka

// The client as internal/group sees it: groupDeps gives a ConsumerGroup's
// member its cluster (coordinator and leader connections, metadata), its
// balancers, its loggers and the Reader's failure memory; groupErrors
// classifies the client's errors.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/rackfetch/kafka-go/internal/group"
	"github.com/rackfetch/kafka-go/protocol"
)

func (cg *ConsumerGroup) groupConfig() group.Config {
	c := &cg.config
	return group.Config{
		ID:                     c.ID,
		Topics:                 c.Topics,
		HeartbeatInterval:      c.HeartbeatInterval,
		SessionTimeout:         c.SessionTimeout,
		RebalanceTimeout:       c.RebalanceTimeout,
		JoinGroupBackoff:       c.JoinGroupBackoff,
		RetentionTime:          c.RetentionTime,
		PartitionWatchInterval: c.PartitionWatchInterval,
		WatchPartitionChanges:  c.WatchPartitionChanges,
		Timeout:                c.Timeout,
		StartOffset:            c.StartOffset,
		IsolationLevel:         int8(c.isolationLevel),
	}
}

func (cg *ConsumerGroup) groupDeps() group.Deps {
	d := groupDeps{cg}
	return group.Deps{Cluster: d, Balancers: d, Errors: groupErrors{}, Log: d, Failures: d}
}

// groupConn is a *Conn as internal/group's Conn; two are equal when they
// are the same connection.
type groupConn struct{ c *Conn }

func (c groupConn) RoundTrip(ctx context.Context, req protocol.Request, limit int16) (protocol.Response, int16, error) {
	return c.c.roundTrip(ctx, req, limit)
}
func (c groupConn) Close() error { return c.c.Close() }
func (c groupConn) Broken() bool { return c.c.isBroken() }

type groupDeps struct{ cg *ConsumerGroup }

func (d groupDeps) DialCoordinator(ctx context.Context) (group.CoordinatorConn, error) {
	c, err := d.cg.dialCoordinator(ctx)
	if err != nil {
		return nil, err
	}
	return groupConn{c}, nil
}

// dialCoordinator asks a broker which one coordinates the group and
// connects to it. The question goes through the cluster's control
// connections (withControlCtx): each attempt under the control deadline,
// brokers that stalled tried last (a coordinator that stopped answering is
// marked so, see CoordinatorAnswered), the next broker asked when one does
// not answer.
func (cg *ConsumerGroup) dialCoordinator(ctx context.Context) (*Conn, error) {
	var co group.Coordinator
	err := cg.cl.withControlCtx(ctx, func(rctx context.Context, c *Conn) error {
		var err error
		co, err = group.FindCoordinator(rctx, groupConn{c}, cg.config.ID, groupErrors{})
		return err
	})
	if err != nil {
		return nil, err
	}
	b := Broker{ID: co.ID, Host: co.Host, Port: co.Port}
	if known, ok := cg.cl.broker(b.ID); ok {
		b.Rack = known.Rack
	}
	addr := net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
	// A dial and ApiVersions are answered at once by a live broker: the
	// control deadline (at most 3s), not Timeout, bounds what a frozen
	// coordinator costs each lookup.
	rctx, cancel := context.WithTimeout(ctx, min(cg.config.Timeout, controlTimeout(cg.cl.dialer)))
	defer cancel()
	conn, err := cg.cl.dialer.connect(rctx, "tcp", addr, ConnConfig{Broker: b.ID, Rack: b.Rack})
	if err != nil {
		var kerr Error
		if !errors.As(err, &kerr) {
			cg.cl.markUnresponsive(addr)
		}
		return nil, fmt.Errorf("connecting to coordinator %d at %s: %w", b.ID, addr, err)
	}
	cg.log("group %s: coordinator is broker %d at %s", cg.config.ID, b.ID, addr)
	return conn, nil
}

// CoordinatorAnswered keeps the cluster's memory of unresponsive brokers:
// a coordinator that did not answer (a timeout, a broken connection), most
// likely frozen, is asked last at the next lookup (it may well keep naming
// itself), and one that answered is trusted again.
func (d groupDeps) CoordinatorAnswered(c group.CoordinatorConn, err error) {
	b, ok := d.cg.cl.broker(c.(groupConn).c.Broker().ID)
	if !ok {
		return
	}
	var kerr Error
	switch {
	case err == nil || errors.As(err, &kerr):
		d.cg.cl.markResponsive(hostPort(b))
	default:
		d.cg.cl.markUnresponsive(hostPort(b))
	}
}

func (d groupDeps) Refresh(ctx context.Context, topics ...string) error {
	return d.cg.cl.refresh(ctx, topics...)
}

func (d groupDeps) PartitionCount(topic string) (int, bool) {
	ps, ok := d.cg.cl.topicPartitions(topic)
	return len(ps), ok
}

func (d groupDeps) LeaderConn(ctx context.Context, topic string, partition int) (group.Conn, error) {
	c, _, err := d.cg.cl.leaderConn(ctx, topic, partition)
	if err != nil {
		return nil, err
	}
	return groupConn{c}, nil
}

func (d groupDeps) DropConn(c group.Conn) { d.cg.cl.dropConn(c.(groupConn).c) }

func (d groupDeps) Protocols() ([]group.Protocol, error) {
	out := make([]group.Protocol, 0, len(d.cg.config.GroupBalancers))
	for _, b := range d.cg.config.GroupBalancers {
		userData, err := d.cg.balancerUserData(b)
		if err != nil {
			return nil, fmt.Errorf("user data of group balancer %s: %w", b.ProtocolName(), err)
		}
		out = append(out, group.Protocol{Name: b.ProtocolName(), UserData: userData})
	}
	return out, nil
}

// balancerUserData is b.UserData(), except that a RackAffinityGroupBalancer
// without a Rack carries the member's rack (config.rack, else
// Dialer.RackID).
func (cg *ConsumerGroup) balancerUserData(b GroupBalancer) ([]byte, error) {
	rack := cg.config.rack
	if rack == "" && cg.config.Dialer != nil {
		rack = cg.config.Dialer.RackID
	}
	if rack != "" {
		switch rb := b.(type) {
		case RackAffinityGroupBalancer:
			if rb.Rack == "" {
				return []byte(rack), nil
			}
		case *RackAffinityGroupBalancer:
			if rb != nil && rb.Rack == "" {
				return []byte(rack), nil
			}
		}
	}
	return b.UserData()
}

func (d groupDeps) Assign(protocol string, members []group.Member, topics []string) (map[string]map[string][]int, bool) {
	balancer, ok := findGroupBalancer(protocol, d.cg.config.GroupBalancers)
	if !ok {
		return nil, false
	}
	gms := make([]GroupMember, len(members))
	for i, m := range members {
		gms[i] = GroupMember{ID: m.ID, Topics: m.Topics, UserData: m.UserData}
	}
	var partitions []Partition
	for _, t := range topics {
		ps, _ := d.cg.cl.topicPartitions(t)
		partitions = append(partitions, ps...)
	}
	return balancer.AssignGroups(gms, partitions), true
}

func (d groupDeps) Printf(format string, args ...interface{}) { d.cg.log(format, args...) }
func (d groupDeps) Errorf(format string, args ...interface{}) { d.cg.logError(format, args...) }
func (d groupDeps) Commit(quiet bool, groupID string, generationID int32, offsets, format string, args ...interface{}) {
	d.cg.logCommit(quiet, groupID, generationID, offsets, format, args...)
}

func (d groupDeps) Set(err error)             { d.cg.config.failure.set(err) }
func (d groupDeps) Clear()                    { d.cg.config.failure.clear() }
func (d groupDeps) WithCause(err error) error { return d.cg.config.failure.withCause(err) }

// groupErrors classifies the client's errors for internal/group.
type groupErrors struct{}

func (groupErrors) FromCode(code int16, message string) error { return makeError(code, message) }
func (groupErrors) Is(err error, code int16) bool             { return errors.Is(err, Error(code)) }
func (groupErrors) Kafka(err error) bool {
	var kerr Error
	return errors.As(err, &kerr)
}
func (groupErrors) Temporary(err error) bool { return isTemporary(err) }
func (groupErrors) Permanent(err error) bool { return permanentFailure(err) }
func (groupErrors) JoinFatal(err error) bool { return groupJoinErrorFatal(err) }
