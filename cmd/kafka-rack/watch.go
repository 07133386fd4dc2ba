package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// watch is -watch: not implemented yet.
func watch(ctx context.Context, cfg *config, w io.Writer) error {
	return errors.New("-watch is not implemented yet")
}

var _ = fmt.Sprint
