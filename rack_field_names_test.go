package kafka

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The client's rack is Rack on ReaderConfig (and on Writer, WriterConfig or
// Transport should they get one) and RackID on Dialer and ConnConfig, where
// kafka-go's ConnConfig.Rack is the broker's rack: the names the godoc of
// those fields states.
func TestRackFieldNames(t *testing.T) {
	fields := func(v any) map[string]bool {
		out := map[string]bool{}
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumField(); i++ {
			out[typ.Field(i).Name] = true
		}
		return out
	}
	assert.True(t, fields(ReaderConfig{})["Rack"])
	assert.False(t, fields(ReaderConfig{})["RackID"])
	assert.True(t, fields(Dialer{})["RackID"])
	assert.False(t, fields(Dialer{})["Rack"])
	assert.True(t, fields(ConnConfig{})["RackID"], "the client's rack")
	assert.True(t, fields(ConnConfig{})["Rack"], "kafka-go's: the broker's rack")
	for _, v := range []any{Writer{}, WriterConfig{}, Transport{}} {
		assert.False(t, fields(v)["RackID"], "%T names the client's rack Rack", v)
	}
}
