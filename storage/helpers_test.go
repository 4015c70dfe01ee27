package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// openStore opens a fresh store on the backend of the current pass (SQLite, then PostgreSQL:
// backend_test.go), closed when the test ends.
func openStore(t *testing.T) *storage.Store {
	t.Helper()
	return storage.OpenTestStore(t)
}

// openTarget opens the store at target (a SQLite file or a PostgreSQL URL), closed when the
// test ends.
func openTarget(t *testing.T, target string) *storage.Store {
	t.Helper()
	s, err := storage.OpenTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// at returns a fixed time with nanoseconds, in a zone other than UTC, shifted by d.
func at(d time.Duration) time.Time {
	zone := time.FixedZone("CET", 3600)
	return time.Date(2026, 11, 21, 15, 2, 3, 123456789, zone).Add(d)
}

func intp(v int) *int { return &v }

// player returns a player on vodPort with no listen input.
func player(name string, vodPort int) *storage.Player {
	return &storage.Player{
		Base:    storage.Base{ID: storage.NewID(), Created: at(0), Modified: at(0)},
		VodName: name,
		Input:   storage.Input{InputType: "INPUT_TYPE_SRT_SOFTWARE", InputServerID: storage.NewID(), InputStreamID: "publisher/srv/cam"},
		VodPort: vodPort,
	}
}

// createRecording stores a new recording "archive" (mp4) in s and returns it.
func createRecording(t *testing.T, s *storage.Store) *storage.Recording {
	t.Helper()
	rec := &storage.Recording{Base: storage.Base{ID: storage.NewID()}, RecordingName: "archive", OutputFormat: "mp4"}
	if err := s.Create(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// createPlayer stores player name on vodPort in s.
func createPlayer(t *testing.T, s *storage.Store, name string, vodPort int) *storage.Player {
	t.Helper()
	p := player(name, vodPort)
	if err := s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// rtmpServer returns an RTMP server module on port (TCP).
func rtmpServer(name string, port int) *storage.RTMPServer {
	return &storage.RTMPServer{Base: storage.Base{ID: storage.NewID(), Created: at(0)}, ServerName: name, ServerPort: port}
}

// listenRestream returns a restream whose input listens on port/transport.
func listenRestream(name string, port int, transport string) *storage.Restream {
	return &storage.Restream{
		Base:         storage.Base{ID: storage.NewID()},
		RestreamName: name,
		RestreamType: "RESTREAM_TYPE_RTMP_TO_SRT",
		Input: storage.Input{
			InputType:             "INPUT_TYPE_RTMP_LISTEN",
			InputStreamListenPort: &storage.ListenPort{Port: port, Transport: transport},
		},
		Output: storage.Output{OutputType: "OUTPUT_TYPE_SRT_URL", OutputStreamURL: "srt://example.net:9000"},
	}
}

// claimsOf returns the keys held by an entity.
func claimsOf(t *testing.T, s *storage.Store, entityID string) []storage.PortKey {
	t.Helper()
	claims, err := s.PortClaims(context.Background())
	if err != nil {
		t.Fatalf("PortClaims: %v", err)
	}
	var keys []storage.PortKey
	for _, c := range claims {
		if c.EntityID == entityID {
			keys = append(keys, c.Key())
		}
	}
	return keys
}
