package app

import (
	"context"
	"net"
	"strconv"

	"github.com/sluicemedia/sluice/storage"
)

// Check implements api.Processes: it refuses what this server cannot run.
func (m *Manager) Check(_ context.Context, rec storage.Record) error {
	var tc *storage.Transcoding
	switch r := rec.(type) {
	case *storage.Player:
		tc = r.Transcoding
	case *storage.Restream:
		tc = r.Transcoding
	case *storage.Recording:
		tc = r.Transcoding
	}
	if m.checkOutputs != nil {
		if err := m.checkOutputs(rec); err != nil {
			return err
		}
	}
	if m.checkTranscoding != nil {
		return m.checkTranscoding(tc)
	}
	return nil
}

// PortBusy implements api.Processes: it tries to bind the port where a listener of a record
// would bind it (--media-bind; every interface by default).
func (m *Manager) PortBusy(k storage.PortKey) bool {
	addr := net.JoinHostPort(m.bind, strconv.Itoa(k.Port))
	if k.Transport == storage.UDP {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return true
		}
		pc.Close()
		return false
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return true
	}
	l.Close()
	return false
}
