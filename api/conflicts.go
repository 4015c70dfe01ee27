package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/sluicemedia/sluice/storage"
)

// checkConflicts answers 409 before anything is stored or checked by Processes: the name is
// used by another record of the module, or a port of rec is held by another entity or bound by
// another program. Store.Create/Update enforce the same atomically.
func (s *server) checkConflicts(r *http.Request, m *module, rec storage.Record) error {
	ctx := r.Context()
	self := rec.Meta().ID
	others, err := s.records(r, m)
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.Meta().ID != self && o.UniqueName() == rec.UniqueName() {
			return &apiError{Status: http.StatusConflict, Code: CodeNameTaken, Field: nameField(rec),
				Message: fmt.Sprintf("a %s named %q already exists", m.noun, rec.UniqueName())}
		}
	}
	claims, err := s.store.PortClaims(ctx)
	if err != nil {
		return err
	}
	for _, k := range rec.PortKeys() {
		c, held := findClaim(claims, k)
		switch {
		case held && c.EntityID == self && c.Module == m.kind:
			// Already ours (an update): our own process may have it bound.
		case held:
			return withField(errPortTaken(k, describeClaim(c)), portField(rec, k))
		case s.procs.PortBusy(k):
			return withField(errPortTaken(k, "bound by another program"), portField(rec, k))
		}
	}
	return nil
}

// storeConflict words a conflict the store found on writing rec (another request took the name
// or a port after checkConflicts looked) as checkConflicts does, naming the field; any other
// error is returned as it is.
func storeConflict(m *module, rec storage.Record, err error) error {
	var pt *storage.PortTakenError
	switch {
	case errors.Is(err, storage.ErrNameTaken):
		return &apiError{Status: http.StatusConflict, Code: CodeNameTaken, Field: nameField(rec),
			Message: fmt.Sprintf("a %s named %q already exists", m.noun, rec.UniqueName())}
	case errors.As(err, &pt):
		return withField(portTakenError(err), portField(rec, pt.Key))
	}
	return err
}

func findClaim(claims []storage.PortClaim, k storage.PortKey) (storage.PortClaim, bool) {
	for _, c := range claims {
		if c.Port == k.Port && strings.EqualFold(c.Transport, k.Transport) {
			return c, true
		}
	}
	return storage.PortClaim{}, false
}

var moduleNouns = map[storage.Module]string{
	storage.ModuleVOD:         "player",
	storage.ModuleRestream:    "restream",
	storage.ModuleRecording:   "recording",
	storage.ModuleSRTServers:  "SRT server",
	storage.ModuleRTMPServers: "RTMP server",
	storage.ModuleWebhooks:    "webhook",
}

func describeClaim(c storage.PortClaim) string {
	if c.Module == storage.ModuleAPI {
		return "held by the API server itself"
	}
	noun := moduleNouns[c.Module]
	if noun == "" {
		noun = string(c.Module)
	}
	return fmt.Sprintf("held by %s %q (%s %s)", noun, c.EntityName, c.Module, c.EntityID)
}

func withField(e *apiError, field string) *apiError {
	e.Field = field
	return e
}

// nameField is the JSON path of the unique name of rec.
func nameField(rec storage.Record) string {
	switch rec.(type) {
	case *storage.Player:
		return "vod_name"
	case *storage.Restream:
		return "restream_name"
	case *storage.Recording:
		return "recording_name"
	case *storage.SRTServer, *storage.RTMPServer:
		return "server_name"
	}
	return "name"
}

// portField is the JSON path of the field of rec that asks for port k.
func portField(rec storage.Record, k storage.PortKey) string {
	const listen = "input.input_stream_listen_port.port"
	switch r := rec.(type) {
	case *storage.Player:
		if lk, ok := r.Input.ListenKey(); ok && lk == k {
			return listen
		}
		return "vod_port"
	case *storage.SRTServer, *storage.RTMPServer:
		return "server_port"
	}
	return listen
}
