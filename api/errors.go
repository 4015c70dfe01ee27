package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// Error codes of the error body (API.md "Success and error bodies").
const (
	CodeBadJSON          = "BAD_JSON"
	CodeValidation       = "VALIDATION"
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeNotFound         = "NOT_FOUND"
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	CodeNameTaken        = "NAME_TAKEN"
	CodePortTaken        = "PORT_TAKEN"
	CodeTooLarge         = "TOO_LARGE"
	CodeUnsupported      = "UNSUPPORTED"
	CodeRateLimited      = "RATE_LIMITED"
	CodeInternal         = "INTERNAL"
	CodeUnavailable      = "UNAVAILABLE"
	// CodeInsufficientStorage (507) answers a write refused for lack of space: the file system
	// is full, a quota is used up, or a file-size limit is reached.
	CodeInsufficientStorage = "INSUFFICIENT_STORAGE"
	// CodeNodeRunning (409) answers the removal of a cluster node that still heartbeats.
	CodeNodeRunning = "NODE_RUNNING"
)

// apiError is an error that maps to one status and error body.
type apiError struct {
	Status     int
	Code       string
	Message    string
	Field      string
	RetryAfter time.Duration // sets Retry-After (429, 503)
}

func (e *apiError) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

func errValidation(field, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: CodeValidation, Field: field, Message: fmt.Sprintf(format, args...)}
}

func errNotFound(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

func errUnauthorized(msg string) *apiError {
	return &apiError{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: msg}
}

func errPortTaken(k storage.PortKey, holder string) *apiError {
	return &apiError{Status: http.StatusConflict, Code: CodePortTaken,
		Message: fmt.Sprintf("port %d/%s is %s", k.Port, k.Transport, holder)}
}

var errBadJSON = &apiError{Status: http.StatusBadRequest, Code: CodeBadJSON, Message: "request body must be a JSON object"}

var errTooLarge = &apiError{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge, Message: "request body is larger than 1 MiB"}

type errorBody struct {
	Success bool        `json:"success"`
	Error   errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// WriteError answers status with the API's error body carrying code and message, for the
// server's handlers outside this package that answer in the API's form (a node forwarding a
// request to another).
func WriteError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: message}})
}

// fail answers err as an error body. Errors that are not the client's fault are logged with
// their detail and answered without it.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.classify(r, err)
	if ae.RetryAfter > 0 {
		secs := int((ae.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	writeJSON(w, ae.Status, errorBody{Error: errorDetail{Code: ae.Code, Message: ae.Message, Field: ae.Field}})
}

func (s *server) classify(r *http.Request, err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound("not found")
	case errors.Is(err, storage.ErrNameTaken):
		return &apiError{Status: http.StatusConflict, Code: CodeNameTaken, Message: "the name is already used in this module"}
	case errors.Is(err, storage.ErrPortTaken):
		return portTakenError(err)
	case errors.Is(err, storage.ErrNodeRunning):
		return &apiError{Status: http.StatusConflict, Code: CodeNodeRunning,
			Message: err.Error() + "; stop it first (drain moves its records), or wait for the lease TTL after it went"}
	case errors.Is(err, ErrUnsupported):
		return &apiError{Status: http.StatusUnprocessableEntity, Code: CodeUnsupported, Message: err.Error()}
	case errors.Is(err, storage.ErrNoSpace), errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		s.log.Warn("write refused: no space left", "method", r.Method, "path", r.URL.Path, "err", err)
		return &apiError{Status: http.StatusInsufficientStorage, Code: CodeInsufficientStorage,
			Message: "the server has no space left to store this change; free disk space (or raise the quota) and try again"}
	case errors.Is(err, ErrNotAvailable):
		s.log.Warn("dependency not available", "path", r.URL.Path, "err", err)
		return &apiError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: err.Error()}
	}
	lvl := slog.LevelError
	if errors.Is(err, context.Canceled) {
		lvl = slog.LevelDebug
	}
	s.log.Log(r.Context(), lvl, "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	return &apiError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error; see the server log"}
}

// portTakenError words a storage port conflict, naming the holder.
func portTakenError(err error) *apiError {
	var pt *storage.PortTakenError
	if errors.As(err, &pt) {
		if pt.Holder.ID == "" {
			return errPortTaken(pt.Key, "named twice by this record")
		}
		return errPortTaken(pt.Key, describeClaim(pt.Holder))
	}
	return &apiError{Status: http.StatusConflict, Code: CodePortTaken, Message: "a port of this record is held by another entity"}
}
