package group

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// fetchOffsets reads the group's committed offsets of partitions (by
// topic): -1 where none is committed.
func (g *Group) fetchOffsets(ctx context.Context, conn Conn, partitions map[string][]int) (map[string]map[int]int64, error) {
	return FetchOffsets(ctx, conn, g.cfg.ID, g.cfg.Timeout, partitions, g.deps.Errors)
}

// FetchOffsets reads the committed offsets of group id of partitions (by
// topic) from its coordinator on conn, under timeout: -1 where none is
// committed.
func FetchOffsets(ctx context.Context, conn Conn, id string, timeout time.Duration, partitions map[string][]int, errs Errors) (map[string]map[int]int64, error) {
	names := make([]string, 0, len(partitions))
	for t := range partitions {
		names = append(names, t)
	}
	sort.Strings(names)
	topics := make([]protocol.OffsetFetchRequestTopic, 0, len(names))
	for _, t := range names {
		ps := make([]int32, len(partitions[t]))
		for i, p := range partitions[t] {
			ps[i] = int32(p)
		}
		topics = append(topics, protocol.OffsetFetchRequestTopic{Name: t, PartitionIndexes: ps})
	}
	req := &protocol.OffsetFetchRequest{
		GroupID: id,                                                                                 // v1-7
		Topics:  topics,                                                                             // v1-7
		Groups:  []protocol.OffsetFetchRequestGroup{{GroupID: id, MemberEpoch: -1, Topics: topics}}, // v8+
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, v, err := conn.RoundTrip(rctx, req, -1)
	if err != nil {
		return nil, err
	}
	r := resp.(*protocol.OffsetFetchResponse)
	code, got := r.ErrorCode, r.Topics
	if v >= 8 {
		code, got = 0, nil
		for _, rg := range r.Groups {
			if rg.GroupID == id {
				code, got = rg.ErrorCode, rg.Topics
			}
		}
	}
	if err := errs.FromCode(code, ""); err != nil {
		return nil, err
	}
	out := make(map[string]map[int]int64, len(partitions))
	for t, ps := range partitions {
		out[t] = make(map[int]int64, len(ps))
		for _, p := range ps {
			out[t][p] = -1
		}
	}
	for _, t := range got {
		for _, p := range t.Partitions {
			if err := errs.FromCode(p.ErrorCode, ""); err != nil {
				return nil, fmt.Errorf("committed offset of %s/%d: %w", t.Name, p.PartitionIndex, err)
			}
			if out[t.Name] != nil {
				out[t.Name][int(p.PartitionIndex)] = p.CommittedOffset
			}
		}
	}
	return out, nil
}

// commit sends OffsetCommit for the generation on conn. With a
// RetentionTime the request is capped at version 4, the last that carries
// it. Partitions the coordinator refused come back as the client's error
// (one code: that error; several: their errors.Join, each naming its
// partition).
func (gen *Generation) commit(ctx context.Context, conn Conn, offsets map[string]map[int]int64) error {
	cfg, errs := &gen.group.cfg, gen.group.deps.Errors
	req := &protocol.OffsetCommitRequest{
		GroupID:         gen.GroupID,
		GenerationID:    gen.ID,
		MemberID:        gen.MemberID,
		RetentionTimeMs: -1,
	}
	limit := int16(-1)
	if cfg.RetentionTime != DefaultRetentionTime {
		req.RetentionTimeMs = int64(cfg.RetentionTime / time.Millisecond)
		limit = 4
	}
	names := make([]string, 0, len(offsets))
	for t := range offsets {
		names = append(names, t)
	}
	sort.Strings(names)
	noMetadata := ""
	for _, t := range names {
		rt := protocol.OffsetCommitRequestTopic{Name: t}
		ids := make([]int, 0, len(offsets[t]))
		for p := range offsets[t] {
			ids = append(ids, p)
		}
		sort.Ints(ids)
		for _, p := range ids {
			rt.Partitions = append(rt.Partitions, protocol.OffsetCommitRequestPartition{
				PartitionIndex:       int32(p),
				CommittedOffset:      offsets[t][p],
				CommittedLeaderEpoch: -1,
				CommittedMetadata:    &noMetadata,
			})
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, _, err := conn.RoundTrip(ctx, req, limit)
	if err != nil {
		return err
	}
	var failed []error
	codes := map[int16]bool{}
	for _, t := range resp.(*protocol.OffsetCommitResponse).Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				codes[p.ErrorCode] = true
				failed = append(failed, fmt.Errorf("committing the offset of %s/%d: %w", t.Name, p.PartitionIndex, errs.FromCode(p.ErrorCode, "")))
			}
		}
	}
	switch {
	case len(failed) == 0:
		return nil
	case len(codes) == 1:
		for code := range codes {
			return errs.FromCode(code, "")
		}
	}
	return errors.Join(failed...)
}
