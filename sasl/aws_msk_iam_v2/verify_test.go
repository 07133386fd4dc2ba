package aws_msk_iam_v2

import (
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// queryNames are the signed query parameters of the payload, by the
// lower-case names MSK receives them under.
var queryNames = map[string]string{
	"action":               "Action",
	"x-amz-algorithm":      "X-Amz-Algorithm",
	"x-amz-credential":     "X-Amz-Credential",
	"x-amz-date":           "X-Amz-Date",
	"x-amz-expires":        "X-Amz-Expires",
	"x-amz-security-token": "X-Amz-Security-Token",
	"x-amz-signedheaders":  "X-Amz-SignedHeaders",
}

// verifyPayload checks an AWS_MSK_IAM payload as a broker would: its fields,
// that it is valid at now, and its signature recomputed with the secret of
// accessKeyID. It returns the payload's fields.
func verifyPayload(ir []byte, accessKeyID, secret string, now time.Time) (map[string]string, error) {
	var p map[string]string
	if err := json.Unmarshal(ir, &p); err != nil {
		return nil, fmt.Errorf("payload is not a JSON object of strings: %w", err)
	}
	for field, want := range map[string]string{
		"version":             "2020_10_22",
		"action":              "kafka-cluster:Connect",
		"x-amz-algorithm":     "AWS4-HMAC-SHA256",
		"x-amz-signedheaders": "host",
	} {
		if p[field] != want {
			return p, fmt.Errorf("%s is %q, want %q", field, p[field], want)
		}
	}
	if p["host"] == "" || p["user-agent"] == "" {
		return p, fmt.Errorf("host %q or user-agent %q missing", p["host"], p["user-agent"])
	}
	signedAt, err := time.Parse("20060102T150405Z", p["x-amz-date"])
	if err != nil {
		return p, fmt.Errorf("x-amz-date: %w", err)
	}
	expires, err := strconv.Atoi(p["x-amz-expires"])
	if err != nil {
		return p, fmt.Errorf("x-amz-expires: %w", err)
	}
	if now.Before(signedAt.Add(-time.Minute)) || now.After(signedAt.Add(time.Duration(expires)*time.Second)) {
		return p, fmt.Errorf("signed at %v for %ds, not valid at %v", signedAt, expires, now)
	}
	scope := strings.Split(p["x-amz-credential"], "/")
	if len(scope) != 5 || scope[0] != accessKeyID || scope[1] != p["x-amz-date"][:8] || scope[3] != "kafka-cluster" || scope[4] != "aws4_request" {
		return p, fmt.Errorf("credential scope %q is not %s's for kafka-cluster on %s", p["x-amz-credential"], accessKeyID, p["x-amz-date"][:8])
	}

	query := map[string]string{}
	for field, value := range p {
		switch field {
		case "version", "host", "user-agent", "x-amz-signature":
			continue
		}
		name, ok := queryNames[field]
		if !ok {
			return p, fmt.Errorf("unexpected field %q", field)
		}
		query[name] = value
	}
	req := sigv4Request{
		method: "GET", path: "/", query: query,
		headers:     map[string]string{"host": p["host"]},
		payloadHash: sha256Hex(""), amzDate: p["x-amz-date"], region: scope[2], service: "kafka-cluster",
	}
	if want := req.signature(secret); !hmac.Equal([]byte(want), []byte(p["x-amz-signature"])) {
		return p, fmt.Errorf("signature %s, want %s", p["x-amz-signature"], want)
	}
	return p, nil
}
