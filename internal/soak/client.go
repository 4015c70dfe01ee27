package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/sluicemedia/sluice/internal/tooling"
)

// Client calls the sluice API with a token.
type Client struct {
	base  string // http://host:port
	token string
	hc    *http.Client
}

// APIError is an error body of the API (API.md "Success and error bodies").
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("status %d %s: %s", e.Status, e.Code, e.Message)
}

// Login logs in as admin with password and returns a client holding the token.
func Login(ctx context.Context, base, password string) (*Client, error) {
	c := &Client{base: base, hc: &http.Client{Timeout: 30 * time.Second}}
	var out struct {
		Token string `json:"token"`
	}
	if err := c.Call(ctx, http.MethodPost, "/api/auth/login", map[string]any{"email": "admin", "password": password}, &out); err != nil {
		return nil, fmt.Errorf("log in at %s: %w", base, err)
	}
	if out.Token == "" {
		return nil, fmt.Errorf("log in at %s: no token in the answer", base)
	}
	c.token = out.Token
	return c, nil
}

// Call sends body as JSON to path and decodes the answer into out (when not nil). A status
// other than 2xx is an *APIError.
func (c *Client) Call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("accept", "application/json")
	if c.token != "" {
		req.Header.Set("x-access-token", c.token)
	}
	t0 := time.Now()
	resp, err := c.hc.Do(req)
	if d := time.Since(t0); d > 200*time.Millisecond {
		slog.Debug("slow API call", "path", path, "took", d)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		if e.Error.Code == "" {
			e.Error.Message = truncate(raw)
		}
		return fmt.Errorf("%s %s: %w", method, path, &APIError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message})
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode answer %q: %w", method, path, truncate(raw), err)
		}
	}
	return nil
}

// Create creates a record of module (vod, restream, recording, srt-servers, rtmp-servers)
// and returns its id.
func (c *Client) Create(ctx context.Context, module string, body map[string]any) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	if err := c.Call(ctx, http.MethodPost, "/api/"+module+"/create", body, &out); err != nil {
		return "", err
	}
	if out.ID == "" {
		return "", fmt.Errorf("create %s: no id in the answer", module)
	}
	return out.ID, nil
}

// Start starts the record id of module.
func (c *Client) Start(ctx context.Context, module, id string) error {
	return c.Call(ctx, http.MethodPost, "/api/"+module+"/start", map[string]any{"id": id}, nil)
}

// Stop stops the record id of module.
func (c *Client) Stop(ctx context.Context, module, id string) error {
	return c.Call(ctx, http.MethodPost, "/api/"+module+"/stop", map[string]any{"id": id}, nil)
}

// Remove deletes the record id of module.
func (c *Client) Remove(ctx context.Context, module, id string) error {
	return c.Call(ctx, http.MethodDelete, "/api/"+module+"/remove", map[string]any{"id": id}, nil)
}

// Record is what the soak reads of a record (API.md "Records").
type Record struct {
	ID            string         `json:"id"`
	State         string         `json:"state"`
	LastError     string         `json:"last_error"`
	Restarts      int            `json:"restarts"`
	RecordedFiles []RecordedFile `json:"recordedFiles"`
}

// RecordedFile is an entry of a recording's recordedFiles (API.md "Recording files").
type RecordedFile = tooling.RecordedFile

// Get reads the record id of module.
func (c *Client) Get(ctx context.Context, module, id string) (Record, error) {
	var r Record
	err := c.Call(ctx, http.MethodPost, "/api/"+module+"/getById", map[string]any{"id": id}, &r)
	return r, err
}

// Stat is an entry of a module's getStat.
type Stat struct {
	ID              string  `json:"id"`
	Bitrate         float64 `json:"bitrate"`
	BytesIn         int64   `json:"bytes_in"`
	Discontinuities int64   `json:"discontinuities"`
	State           string  `json:"state"`
}

// Stats reads the getStat of module, by record id.
func (c *Client) Stats(ctx context.Context, module string) (map[string]Stat, error) {
	var all []Stat
	if err := c.Call(ctx, http.MethodPost, "/api/"+module+"/getStat", nil, &all); err != nil {
		return nil, err
	}
	out := make(map[string]Stat, len(all))
	for _, s := range all {
		out[s.ID] = s
	}
	return out, nil
}

// PortKey is a port and its transport, TCP or UDP.
type PortKey struct {
	Port      int
	Transport string
}

// ListeningPorts returns the sockets the server holds open now (/api/utils/getListeningPorts).
func (c *Client) ListeningPorts(ctx context.Context) (map[PortKey]bool, error) {
	var raw []struct {
		Port      int    `json:"port"`
		Transport string `json:"transport"`
	}
	if err := c.Call(ctx, http.MethodPost, "/api/utils/getListeningPorts", nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[PortKey]bool, len(raw))
	for _, p := range raw {
		out[PortKey(p)] = true
	}
	return out, nil
}
