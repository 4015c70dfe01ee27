package testutil

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/tooling"
)

// API calls a sluice server's HTTP API from a test: JSON bodies, the token in x-access-token,
// DELETE for the remove routes and POST for the others (API.md).
type API struct {
	T     testing.TB
	Base  string       // http://host:port
	Token string       // sent when not empty
	HTTP  *http.Client // nil: http.DefaultClient
}

// Send sends one call with token (none when empty) and returns the answer's status and body.
// It does not judge them, and is safe from any goroutine.
func (a API) Send(path string, body any, token string) (int, []byte, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	method := http.MethodPost
	if strings.HasSuffix(path, "/remove") {
		method = http.MethodDelete
	}
	req, err := http.NewRequest(method, a.Base+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("x-access-token", token)
	}
	client := a.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// Post sends one call with a.Token and returns the answer's status and body; a call that
// cannot be sent fails the test.
func (a API) Post(path string, body any) (int, []byte) {
	a.T.Helper()
	st, raw, err := a.Send(path, body, a.Token)
	if err != nil {
		a.T.Fatalf("%s: %v", path, err)
	}
	return st, raw
}

// Call sends one call with a.Token and fails the test unless it answers want; out, when not
// nil, receives the JSON answer.
func (a API) Call(path string, body any, want int, out any) {
	a.T.Helper()
	st, raw := a.Post(path, body)
	if st != want {
		a.T.Fatalf("%s: status %d, want %d: %s", path, st, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			a.T.Fatalf("%s: %v: %s", path, err, raw)
		}
	}
}

// Create creates a record of module (201) and returns its id.
func (a API) Create(module string, body map[string]any) string {
	a.T.Helper()
	var c struct {
		ID string `json:"id"`
	}
	a.Call("/api/"+module+"/create", body, http.StatusCreated, &c)
	return c.ID
}

// CreateOnPorts creates a record of module whose body takes n free ports, choosing others
// when the server answers 409 PORT_TAKEN: another program of this busy machine took one
// meanwhile (FreePort hands out ephemeral ports, which any outgoing connection may take), or
// a record created before holds a port FreePort handed out twice. It gives up after 5 tries
// and returns the record's id and its ports.
func (a API) CreateOnPorts(module string, n int, body func(ports []int) map[string]any) (string, []int) {
	a.T.Helper()
	for range 5 {
		ports := make([]int, n)
		for i := range ports {
			ports[i] = FreePort(a.T)
		}
		st, raw := a.Post("/api/"+module+"/create", body(ports))
		if st == http.StatusConflict && bytes.Contains(raw, []byte("PORT_TAKEN")) {
			continue
		}
		if st != http.StatusCreated {
			a.T.Fatalf("%s create: status %d: %s", module, st, raw)
		}
		var c struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" {
			a.T.Fatalf("%s create: %v: %s", module, err, raw)
		}
		return c.ID, ports
	}
	a.T.Fatalf("%s create: no free ports in 5 tries", module)
	return "", nil
}

// CreateOnPort is CreateOnPorts with one port.
func (a API) CreateOnPort(module string, body func(port int) map[string]any) (string, int) {
	a.T.Helper()
	id, ports := a.CreateOnPorts(module, 1, func(p []int) map[string]any { return body(p[0]) })
	return id, ports[0]
}

// RecordedFile is an entry of a recording's recordedFiles, as the API answers it.
type RecordedFile = tooling.RecordedFile

// RecordedFiles returns the files of the recording id.
func (a API) RecordedFiles(id string) []RecordedFile {
	a.T.Helper()
	var rec struct {
		Files []RecordedFile `json:"recordedFiles"`
	}
	a.Call("/api/recording/getById", map[string]any{"id": id}, http.StatusOK, &rec)
	return rec.Files
}
