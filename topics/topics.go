// Package topics lists a cluster's topics through a kafka.Client, as
// kafka-go's package of the same name does.
package topics

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	kafka "github.com/rackfetch/kafka-go"
)

// List returns every topic of the client's cluster.
func List(ctx context.Context, client *kafka.Client) ([]kafka.Topic, error) {
	if client == nil {
		return nil, errors.New("topics.List: a client is required")
	}
	resp, err := client.Metadata(ctx, &kafka.MetadataRequest{Addr: client.Addr})
	if err != nil {
		return nil, fmt.Errorf("topics.List: %w", err)
	}
	return resp.Topics, nil
}

// ListRe returns the topics whose name matches re.
func ListRe(ctx context.Context, client *kafka.Client, re *regexp.Regexp) ([]kafka.Topic, error) {
	if re == nil {
		return nil, errors.New("topics.ListRe: a regular expression is required")
	}
	all, err := List(ctx, client)
	if err != nil {
		return nil, err
	}
	var matched []kafka.Topic
	for _, t := range all {
		if re.MatchString(t.Name) {
			matched = append(matched, t)
		}
	}
	return matched, nil
}
