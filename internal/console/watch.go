package console

import (
	"bytes"
	"net/http"
	"strconv"
)

// Player is what a watch page needs of a player record.
type Player struct {
	// ID is the player's id; its playlists are /hls/<id>/<id>/index.m3u8 and index.mpd.
	ID string
	// Name is the player's vod_name, the page's title.
	Name string
	// InitialLiveManifestSize is hls.js's initialLiveManifestSize (segments loaded before
	// playback starts).
	InitialLiveManifestSize int
	// LiveSyncDurationCount is hls.js's liveSyncDurationCount and dash.js's
	// liveDelayFragmentCount (segments behind the live edge).
	LiveSyncDurationCount int
	// LowLatency plays with hls.js lowLatencyMode: the player serves LL-HLS (low_latency).
	// hls.js then keeps PART-HOLD-BACK behind the live edge, not LiveSyncDurationCount
	// segments, and plays up to 1.5x fast to get back to it.
	LowLatency bool
}

// watchData is the template's data.
type watchData struct {
	Player
	Assets, Format, Src string
}

// Watch serves p's watch page: hls.js (or native HLS) by default, dash.js with ?format=dash.
// The page takes the player's settings from data attributes (no inline script) and shows them.
func (s *Site) Watch(p Player) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if onlyGet(w, r) {
			return
		}
		if !s.built {
			plain(w, http.StatusServiceUnavailable, NotBuilt)
			return
		}
		d := watchData{Player: p, Assets: s.assetBase(), Format: "hls"}
		switch f := r.URL.Query().Get("format"); f {
		case "", "hls":
		case "dash":
			d.Format = "dash"
		default:
			plain(w, http.StatusBadRequest, "format must be hls or dash, not "+strconv.Quote(f)+"\n")
			return
		}
		d.Src = "/hls/" + p.ID + "/" + p.ID + "/index.m3u8"
		if d.Format == "dash" {
			d.Src = "/hls/" + p.ID + "/" + p.ID + "/index.mpd"
		}
		var b bytes.Buffer
		if err := s.watch.Execute(&b, d); err != nil {
			plain(w, http.StatusInternalServerError, "render the watch page: "+err.Error()+"\n")
			return
		}
		pageHeaders(w, watchCSP)
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		if r.Method != http.MethodHead {
			_, _ = w.Write(b.Bytes())
		}
	})
}
