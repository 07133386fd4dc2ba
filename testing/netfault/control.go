package netfault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The control API, on loopback only (no authentication):
//
//	GET  /status                          every broker's BrokerStatus (JSON list)
//	POST /set    {"broker":2,"fault":{}}  Set
//	POST /clear  {"broker":2}             Clear (broker 0: every broker)

type setRequest struct {
	Broker int   `json:"broker"`
	Fault  Fault `json:"fault"`
}

// Handler serves the control API for p.
func (p *Proxy) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p.Status())
	})
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		var req setRequest
		if !decode(w, r, &req) {
			return
		}
		if err := p.Set(req.Broker, req.Fault); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc("/clear", func(w http.ResponseWriter, r *http.Request) {
		var req setRequest
		if !decode(w, r, &req) {
			return
		}
		if req.Broker == 0 {
			p.ClearAll()
			return
		}
		if err := p.Clear(req.Broker); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	return mux
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return false
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(v); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// Client controls a proxy process through its control API (cmd/netfault serve -control ADDR).
type Client struct {
	Addr string // host:port of the control API
}

// httpClient keeps no idle connection: a test's control calls are few, and a kept connection's goroutines
// would outlive the test.
var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// Set puts fault f on broker id's path.
func (c *Client) Set(ctx context.Context, id int, f Fault) error {
	return c.post(ctx, "/set", setRequest{Broker: id, Fault: f}, nil)
}

// Clear undoes the fault on broker id's path (0: every broker's).
func (c *Client) Clear(ctx context.Context, id int) error {
	return c.post(ctx, "/clear", setRequest{Broker: id}, nil)
}

// Status returns every broker's path.
func (c *Client) Status(ctx context.Context) ([]BrokerStatus, error) {
	var out []BrokerStatus
	err := c.do(ctx, http.MethodGet, "/status", nil, &out)
	return out, err
}

func (c *Client) post(ctx context.Context, endpoint string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("netfault: encoding %s: %w", endpoint, err)
	}
	return c.do(ctx, http.MethodPost, endpoint, b, out)
}

func (c *Client) do(ctx context.Context, method, endpoint string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.Addr+endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("netfault: %s: %w", endpoint, err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("netfault: %s at %s: %w", endpoint, c.Addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("netfault: reading the answer to %s: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("netfault: %s: %s: %s", endpoint, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("netfault: decoding the answer to %s: %w", endpoint, err)
		}
	}
	return nil
}
