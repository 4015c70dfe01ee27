package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
)

// TimeFormat is the layout of every date the API returns: ISO 8601 UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// fmtTimePtr renders t, or null when it is nil or zero.
func fmtTimePtr(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return FormatTime(*t)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"success":false,"error":{"code":"INTERNAL","message":"internal error; see the server log"}}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// answer is a handler that answers act's status and JSON body, or act's error.
func (s *server) answer(act func(r *http.Request) (status int, body any, err error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status, body, err := act(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, status, body)
	}
}

func writeSuccess(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, map[string]any{"success": true})
}

// normalizeTimes makes any machine-made value (utility results, stream lists) JSON-shaped and
// rewrites every RFC 3339 timestamp in it to TimeFormat. It is not used on user-supplied strings.
func normalizeTimes(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return rewriteTimes(out), nil
}

func rewriteTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = rewriteTimes(e)
		}
	case []any:
		for i, e := range x {
			x[i] = rewriteTimes(e)
		}
	case string:
		if len(x) >= 20 && len(x) <= 40 && x[4] == '-' && x[10] == 'T' {
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return FormatTime(t)
			}
		}
	}
	return v
}
