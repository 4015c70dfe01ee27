package rtsp

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/pion/rtp"
)

// sessionTracks is the ingest side of an RTSP session's description: one inTrack per format
// that is carried, in SDP order.
type sessionTracks struct {
	tracks  []*inTrack
	index   map[format.Format]int // format → index in tracks
	medias  []*description.Media  // the medias with at least one carried format
	skipped []string              // formats left out, with the reason
}

// newSessionTracks sorts the formats of medias into those carried and those left out.
func newSessionTracks(medias []*description.Media) *sessionTracks {
	st := &sessionTracks{index: make(map[format.Format]int)}
	for _, m := range medias {
		if m.IsBackChannel {
			continue
		}
		used := false
		for _, f := range m.Formats {
			t, err := newInTrack(f)
			if err != nil {
				st.skipped = append(st.skipped, err.Error())
				continue
			}
			st.index[f] = len(st.tracks)
			st.tracks = append(st.tracks, t)
			used = true
		}
		if used {
			st.medias = append(st.medias, m)
		}
	}
	return st
}

// err says why nothing can be carried, or nil.
func (st *sessionTracks) err() error {
	if len(st.tracks) > 0 {
		return nil
	}
	if len(st.skipped) == 0 {
		return fmt.Errorf("no media in the session description")
	}
	return fmt.Errorf("no format that can be carried: %s", strings.Join(st.skipped, "; "))
}

// logSkipped logs the formats left out.
func (st *sessionTracks) logSkipped(log *slog.Logger) {
	if len(st.skipped) > 0 {
		log.Info("rtsp: formats left out", "formats", strings.Join(st.skipped, "; "))
	}
}

// packetHandler returns the callback of one format: it hands the packet to the ingest, if
// the format is carried.
func (st *sessionTracks) packetHandler(in *ingest, f format.Format) func(*rtp.Packet) {
	i, ok := st.index[f]
	if !ok {
		return func(*rtp.Packet) {}
	}
	return func(pkt *rtp.Packet) { in.onPacket(i, pkt) }
}
