package rackdetect

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// maxBody bounds what is read of a metadata answer: a zone is a few bytes.
const maxBody = 4096

// metadataClient never uses a proxy (metadata services are link-local and
// a proxy would answer for them), never follows redirects and keeps no idle
// connections (one question per process start).
var metadataClient = &http.Client{
	Transport: &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{Timeout: DefaultTimeout}).DialContext,
		DisableKeepAlives: true,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// baseURL is endpoint without a trailing slash, or the link-local address
// every cloud's metadata service answers on.
func baseURL(endpoint string) string {
	if endpoint == "" {
		return "http://169.254.169.254"
	}
	return strings.TrimSuffix(endpoint, "/")
}

func clientOr(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return metadataClient
}

// call sends one request and returns the body of a 200 answer.
func call(ctx context.Context, c *http.Client, method, url string, header map[string]string) (string, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := clientOr(c).Do(req)
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: reading the answer: %w", method, url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("%s %s: %w", method, url, &StatusError{Code: resp.StatusCode})
	}
	if len(body) > maxBody {
		return "", nil, fmt.Errorf("%s %s: answer longer than %d bytes", method, url, maxBody)
	}
	return string(body), resp.Header, nil
}

// StatusError is a metadata service's answer other than 200 OK.
type StatusError struct {
	Code int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
}

// withTimeout bounds one source's whole exchange.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, timeoutOr(d))
}
