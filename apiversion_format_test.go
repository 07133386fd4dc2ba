package kafka

import (
	"fmt"
	"testing"
)

func TestApiVersionFormat(t *testing.T) {
	v := ApiVersion{ApiKey: 1, MinVersion: 4, MaxVersion: 17}
	for _, tc := range []struct{ format, want string }{
		{"%s", "Fetch"},
		{"%d", "1"},
		{"%-d", "4"},
		{"%+d", "17"},
		{"%v", "Fetch[v4:v17]"},
		{"%-v", "v4"},
		{"%+v", "v17"},
		{"%#v", "kafka.ApiVersion{ApiKey:1 MinVersion:4 MaxVersion:17}"},
		{"%x", "%!x(kafka.ApiVersion=1)"},
	} {
		if got := fmt.Sprintf(tc.format, v); got != tc.want {
			t.Errorf("Sprintf(%q) = %q, want %q", tc.format, got, tc.want)
		}
	}
	if got := fmt.Sprintf("%v", ApiVersion{ApiKey: 999}); got != "ApiKey(999)[v0:v0]" {
		t.Errorf("unknown key: %q", got)
	}
}
