package sasl_test

import (
	"context"
	"testing"

	"github.com/rackfetch/kafka-go/sasl"
)

func TestMetadataContext(t *testing.T) {
	ctx := context.Background()
	if m := sasl.MetadataFromContext(ctx); m != nil {
		t.Fatalf("empty context returned %+v", m)
	}

	md := &sasl.Metadata{Host: "broker-1.example", Port: 9093}
	ctx = sasl.WithMetadata(ctx, md)
	if got := sasl.MetadataFromContext(ctx); got != md {
		t.Fatalf("MetadataFromContext = %+v, want %+v", got, md)
	}

	// Derived contexts keep it; an explicit nil hides an outer value.
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	if got := sasl.MetadataFromContext(child); got != md {
		t.Fatalf("derived context lost the metadata: %+v", got)
	}
	if got := sasl.MetadataFromContext(sasl.WithMetadata(ctx, nil)); got != nil {
		t.Fatalf("WithMetadata(nil) = %+v", got)
	}
}
