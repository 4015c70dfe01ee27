package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// maxBody is the largest request body accepted (API.md: 1 MiB).
const maxBody = 1 << 20

// readBody reads the request body as a JSON object. An empty body is an empty object.
func readBody(r *http.Request) (map[string]any, error) {
	raw, err := readRaw(r)
	if err != nil {
		return nil, err
	}
	return decodeObject(raw)
}

// readRaw reads the request body, refusing one over maxBody.
func readRaw(r *http.Request) ([]byte, error) {
	if r.ContentLength > maxBody {
		return nil, errTooLarge
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLarge
		}
		return nil, errBadJSON
	}
	if len(raw) > maxBody {
		return nil, errTooLarge
	}
	return raw, nil
}

// decodeObject parses raw as one JSON object, keeping numbers as json.Number.
func decodeObject(raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errBadJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errBadJSON
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errBadJSON
	}
	return m, nil
}

// toDoc turns a stored record into a JSON object with json.Number numbers.
func toDoc(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeObject(raw)
}
