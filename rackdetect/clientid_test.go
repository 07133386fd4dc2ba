package rackdetect

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
)

func TestClientID(t *testing.T) {
	t.Setenv(OverrideEnv, "use1-az4")
	id, err := ClientID(context.Background(), kafka.ZoneWarpStream, "orders")
	require.NoError(t, err)
	assert.Equal(t, "orders,ws_az=use1-az4", id)

	id, err = ClientID(context.Background(), kafka.ZoneBufstream, "a;b")
	require.NoError(t, err)
	assert.Equal(t, "a;b;zone=use1-az4", id)

	_, err = ClientID(context.Background(), kafka.ZoneInkless, "app,diskless_az=x")
	assert.True(t, errors.Is(err, kafka.ErrClientIDHasZone), "%v", err)
}

func TestClientIDWithoutZone(t *testing.T) {
	t.Setenv(OverrideEnv, "")
	_, err := ClientID(context.Background(), kafka.ZoneWarpStream, "orders", sourceFunc(func(context.Context) (string, error) {
		return "", ErrNoZone
	}))
	var de *DetectError
	require.ErrorAs(t, err, &de)
}

type sourceFunc func(context.Context) (string, error)

func (f sourceFunc) Zone(ctx context.Context) (string, error) { return f(ctx) }

func (sourceFunc) Name() string { return "test" }
