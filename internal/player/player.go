// Package player serves a player's live HLS and DASH files and its watch page: the segment
// stores its packager fills, the HLS and DASH handlers over them, the per-player mux (served on
// the player's own port and, through Router, on the main port) and its request counters.
// internal/app wires it: it runs the packager and the player's port, and reports the figures.
package player

import (
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/console"
	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
)

// Format is how one format (HLS or DASH) cuts and keeps its segments.
type Format struct {
	// FragmentSize is the segment duration aimed at (hls_fragment_size, dash_fragment_size).
	FragmentSize time.Duration
	// Window is how much media the playlist or manifest lists (hls_fragment_length,
	// dash_fragment_length).
	Window time.Duration
}

// Options of one player.
type Options struct {
	// ID is the player's id: its files are /hls/<ID>/<ID>/<file>, its watch page /hls/<ID>/.
	ID string
	// Name is the player's vod_name, the watch page's title.
	Name string
	// InitialSegments is initial_live_manifest_size: segments listed before the first
	// playlist is served.
	InitialSegments int
	// LiveSyncCount is live_sync_duration_count: segments the players stay behind the edge.
	LiveSyncCount int
	// LowLatency cuts HLS segments into parts of PartTarget (LL-HLS); DASH serves the same
	// parts as LL-DASH when it shares the HLS store.
	LowLatency bool
	// PartTarget is the part duration of a low-latency player; ignored unless LowLatency.
	PartTarget time.Duration
	// HLS and DASH: each format's segment size and window. HLS and DASH share one segment
	// store when their fragment sizes are equal.
	HLS, DASH Format
	// MaxBytes caps each segment store's window in memory, bytes (segment.StoreOptions.MaxBytes;
	// 0: the store's default).
	MaxBytes int64
	// Site serves the watch page and its assets.
	Site *console.Site
	// Log receives the stores' budget evictions and the segmenters' lines. Default
	// slog.Default().
	Log *slog.Logger
}

// Player is one player's segment stores and the handler of its files and watch page.
type Player struct {
	log        *slog.Logger
	prefix     string
	home       string
	watch      http.Handler
	assets     http.Handler
	hls        *hls.Handler
	dash       *dash.Handler
	hlsStore   *segment.Store
	stores     []*segment.Store
	targets    []time.Duration
	partTarget time.Duration
	count      Counters
}

// New returns the player o describes, its stores empty.
func New(o Options) *Player {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	hlsStore := segment.NewStore(segment.StoreOptions{Window: max(o.HLS.Window, o.DASH.Window), Target: o.HLS.FragmentSize, Limit: budget.Limit{MaxBytes: o.MaxBytes}, Log: log})
	dashStore := hlsStore
	targets := []time.Duration{o.HLS.FragmentSize}
	stores := []*segment.Store{hlsStore}
	if o.DASH.FragmentSize != o.HLS.FragmentSize {
		hlsStore = segment.NewStore(segment.StoreOptions{Window: o.HLS.Window, Target: o.HLS.FragmentSize, Limit: budget.Limit{MaxBytes: o.MaxBytes}, Log: log})
		dashStore = segment.NewStore(segment.StoreOptions{Window: o.DASH.Window, Target: o.DASH.FragmentSize, Limit: budget.Limit{MaxBytes: o.MaxBytes}, Log: log})
		stores = []*segment.Store{hlsStore, dashStore}
		targets = []time.Duration{o.HLS.FragmentSize, o.DASH.FragmentSize}
	}
	// A low-latency player's HLS segmenter cuts partial segments (LL-HLS); when DASH shares its
	// store, DASH serves the same segments (classic DASH over chunked segments).
	var partTarget time.Duration
	if o.LowLatency {
		partTarget = o.PartTarget
	}
	return &Player{
		log:    log,
		prefix: fmt.Sprintf("/hls/%s/%s/", o.ID, o.ID),
		home:   "/hls/" + o.ID + "/",
		watch: o.Site.Watch(console.Player{ID: o.ID, Name: o.Name,
			InitialLiveManifestSize: o.InitialSegments, LiveSyncDurationCount: o.LiveSyncCount,
			LowLatency: o.LowLatency}),
		assets:     o.Site.Assets(),
		hls:        hls.New(hlsStore, hls.Options{Live: o.live(o.HLS, partTarget)}),
		dash:       dash.New(dashStore, dash.Options{Live: o.live(o.DASH, dashPartTarget(dashStore == hlsStore, partTarget))}),
		hlsStore:   hlsStore,
		stores:     stores,
		targets:    targets,
		partTarget: partTarget,
	}
}

// live is the settings of the format f's handler that HLS and DASH share, low-latency with
// parts of part (0: classic).
func (o Options) live(f Format, part time.Duration) segment.Live {
	return segment.Live{ID: o.ID, InitialSegments: o.InitialSegments, LiveSyncCount: o.LiveSyncCount,
		FragmentSize: f.FragmentSize, Window: f.Window, PartTarget: part}
}

// dashPartTarget is the DASH handler's PartTarget: the player's part duration when DASH
// shares the low-latency store (LL-DASH over the same parts), else 0 (classic DASH).
func dashPartTarget(shared bool, part time.Duration) time.Duration {
	if !shared {
		return 0
	}
	return part
}

// Stores are the player's segment stores: one, or the HLS store then the DASH store.
func (p *Player) Stores() []*segment.Store { return p.stores }

// HLSStore is the store the HLS playlist reads.
func (p *Player) HLSStore() *segment.Store { return p.hlsStore }

// Counters count what the player's files serve.
func (p *Player) Counters() *Counters { return &p.count }

// Segmenters returns new segmenters, one a store, for one run of the packager
// (segment.Run); the HLS store's cuts parts when the player is low-latency.
func (p *Player) Segmenters() []*segment.Segmenter {
	sgs := make([]*segment.Segmenter, len(p.stores))
	for i, st := range p.stores {
		opts := segment.SegmenterOptions{Target: p.targets[i], Log: p.log}
		if st == p.hlsStore {
			opts.PartTarget = p.partTarget
		}
		sgs[i] = segment.NewSegmenter(st, opts)
	}
	return sgs
}

// ServeHTTP serves the player's HLS and DASH files at /hls/<id>/<id>/<file>, and its watch
// page at /hls/<id>/ (both ports) and / (its own port) with the page's assets under /assets/.
func (p *Player) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch u := r.URL.Path; {
	case u == "/" || u == p.home:
		p.watch.ServeHTTP(w, r)
		return
	case u+"/" == p.home:
		http.Redirect(w, r, p.home, http.StatusMovedPermanently)
		return
	case strings.HasPrefix(u, console.AssetPrefix):
		p.assets.ServeHTTP(w, r)
		return
	}
	if segment.Preflight(w, r) {
		return
	}
	w = p.count.count(w, r)
	if !strings.HasPrefix(r.URL.Path, p.prefix) {
		segment.NotFound(w, "not a file of this player: "+r.URL.Path)
		return
	}
	name := path.Base(r.URL.Path)
	switch {
	case p.hls.Owns(name):
		p.hls.ServeHTTP(w, r)
	case p.dash.Owns(name):
		p.dash.ServeHTTP(w, r)
	default:
		segment.NotFound(w, "no such file: "+name)
	}
}
