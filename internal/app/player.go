package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/console"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/storage"
)

// playback routes /hls/<id>/<id>/<file> and the watch page /hls/<id>/ on the main port to the
// running player with that id.
type playback struct {
	// site serves the players' watch pages and their assets.
	site    *console.Site
	mu      sync.RWMutex
	players map[string]http.Handler
}

func newPlayback(site *console.Site) *playback {
	return &playback{site: site, players: map[string]http.Handler{}}
}

func (pb *playback) set(id string, h http.Handler) {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	if h == nil {
		delete(pb.players, id)
		return
	}
	pb.players[id] = h
}

// ServeHTTP serves a running player's files, or a JSON 404.
func (pb *playback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/hls/"), "/")
	pb.mu.RLock()
	h := pb.players[parts[0]]
	pb.mu.RUnlock()
	if h == nil {
		segment.NotFound(w, "no running player serves "+r.URL.Path)
		return
	}
	h.ServeHTTP(w, r)
}

// playerFiles serves one player's HLS and DASH files at /hls/<id>/<id>/<file>, and its watch
// page at /hls/<id>/ (both ports) and / (its own port) with the page's assets under /assets/.
type playerFiles struct {
	prefix string
	// home is the watch page's path on the main port, /hls/<id>/.
	home   string
	watch  http.Handler
	assets http.Handler
	hls    *hls.Handler
	dash   *dash.Handler
	count  playerCounters
}

func (pf *playerFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/" || p == pf.home:
		pf.watch.ServeHTTP(w, r)
		return
	case p+"/" == pf.home:
		http.Redirect(w, r, pf.home, http.StatusMovedPermanently)
		return
	case strings.HasPrefix(p, console.AssetPrefix):
		pf.assets.ServeHTTP(w, r)
		return
	}
	if segment.Preflight(w, r) {
		return
	}
	w = pf.count.count(w, r)
	if !strings.HasPrefix(r.URL.Path, pf.prefix) {
		segment.NotFound(w, "not a file of this player: "+r.URL.Path)
		return
	}
	name := path.Base(r.URL.Path)
	switch {
	case pf.hls.Owns(name):
		pf.hls.ServeHTTP(w, r)
	case pf.dash.Owns(name):
		pf.dash.ServeHTTP(w, r)
	default:
		segment.NotFound(w, "no such file: "+name)
	}
}

// dashPartTarget is the DASH handler's PartTarget: the player's part duration when DASH
// shares the low-latency store (LL-DASH over the same parts), else 0 (classic DASH).
func dashPartTarget(shared bool, part time.Duration) time.Duration {
	if !shared {
		return 0
	}
	return part
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// playerPipeline is an input (optionally transcoded) cut into CMAF segments and served as HLS
// and DASH on the player's own port and on the main port. HLS and DASH share one segment store
// when their fragment sizes are equal.
func playerPipeline(in *inputs, tr *transcoder, pb *playback, r *storage.Player, emit emitter, log *slog.Logger) (*Pipeline, error) {
	p, err := processPipeline(in, r.ID, r.Input, log)
	if err != nil {
		return nil, err
	}
	src := tr.attach(p, r.ID, r.Transcoding, log)

	hlsSize, dashSize := seconds(r.HLSFragmentSize), seconds(r.DASHFragmentSize)
	hlsWin, dashWin := seconds(r.HLSFragmentLength), seconds(r.DASHFragmentLength)
	hlsStore := segment.NewStore(segment.StoreOptions{Window: max(hlsWin, dashWin), Target: hlsSize, MaxBytes: in.cfg.PlayerMaxBytes, Log: log})
	dashStore := hlsStore
	targets := []time.Duration{hlsSize}
	stores := []*segment.Store{hlsStore}
	if dashSize != hlsSize {
		hlsStore = segment.NewStore(segment.StoreOptions{Window: hlsWin, Target: hlsSize, MaxBytes: in.cfg.PlayerMaxBytes, Log: log})
		dashStore = segment.NewStore(segment.StoreOptions{Window: dashWin, Target: dashSize, MaxBytes: in.cfg.PlayerMaxBytes, Log: log})
		stores = []*segment.Store{hlsStore, dashStore}
		targets = []time.Duration{hlsSize, dashSize}
	}
	// A low-latency player's HLS segmenter cuts partial segments (LL-HLS); when DASH shares its
	// store, DASH serves the same segments (classic DASH over chunked segments).
	var partTarget time.Duration
	if r.LowLatency {
		partTarget = time.Duration(r.PartDurationMS) * time.Millisecond
	}
	files := &playerFiles{
		prefix: fmt.Sprintf("/hls/%s/%s/", r.ID, r.ID),
		home:   "/hls/" + r.ID + "/",
		watch: pb.site.Watch(console.Player{ID: r.ID, Name: r.VodName,
			InitialLiveManifestSize: r.InitialLiveManifestSize, LiveSyncDurationCount: r.LiveSyncDurationCount,
			LowLatency: r.LowLatency}),
		assets: pb.site.Assets(),
		hls: hls.New(hlsStore, hls.Options{ID: r.ID, InitialSegments: r.InitialLiveManifestSize,
			LiveSyncCount: r.LiveSyncDurationCount, FragmentSize: hlsSize, Window: hlsWin, PartTarget: partTarget}),
		dash: dash.New(dashStore, dash.Options{ID: r.ID, InitialSegments: r.InitialLiveManifestSize,
			LiveSyncCount: r.LiveSyncDurationCount, FragmentSize: dashSize, Window: dashWin, PartTarget: dashPartTarget(dashStore == hlsStore, partTarget)}),
	}

	// ready: player_ready was sent for this run of the player.
	var ready atomic.Bool
	packager := Part{Name: "packager", Run: func(ctx context.Context, rep supervisor.Reporter) error {
		rd, err := src.NewReader("player packager")
		if err != nil {
			return err
		}
		defer rd.Close()
		sgs := make([]*segment.Segmenter, len(stores))
		for i, st := range stores {
			opts := segment.SegmenterOptions{Target: targets[i], Log: log}
			if st == hlsStore {
				opts.PartTarget = partTarget
			}
			sgs[i] = segment.NewSegmenter(st, opts)
		}
		rep.SetState(supervisor.Running)
		if emit != nil && !ready.Load() {
			wctx, cancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { watchReady(wctx, hlsStore, r, &ready, emit) })
			defer wg.Wait()
			defer cancel()
		}
		err = segment.Run(ctx, rd, log, sgs...)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			return fmt.Errorf("packager: %w", supervisor.ErrInputGone)
		}
		return err
	}}
	vodPort := Part{Name: "vod-port", Run: func(ctx context.Context, rep supervisor.Reporter) error {
		return serveHTTP(ctx, in.cfg.mediaAddr(r.VodPort), files, rep, log)
	}}
	p.Sinks = append(p.Sinks, packager, vodPort)
	p.Figures = append(p.Figures, playerFigures(stores, &files.count))
	pb.set(r.ID, files)
	prev := p.Close
	p.Close = func() {
		pb.set(r.ID, nil)
		if prev != nil {
			prev()
		}
	}
	return p, nil
}

// watchReady sends player_ready once the HLS store holds the initial_live_manifest_size
// segments the playlist waits for (the first playlist is served).
func watchReady(ctx context.Context, st *segment.Store, r *storage.Player, ready *atomic.Bool, emit emitter) {
	for {
		ch := st.Wait()
		if w := st.Snapshot(); w != nil && len(w.Segments) >= max(r.InitialLiveManifestSize, 1) {
			if ready.CompareAndSwap(false, true) {
				emit.emit(about{storage.ModuleVOD, r.ID, r.VodName}.event(events.PlayerReady, map[string]any{
					"segments": len(w.Segments), "hls_path": fmt.Sprintf("/hls/%s/%s/index.m3u8", r.ID, r.ID),
					"dash_path": fmt.Sprintf("/hls/%s/%s/index.mpd", r.ID, r.ID)}))
			}
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// playerShutdownTimeout is how long a stopping player's port lets its requests finish before
// it closes their connections (2 s).
const playerShutdownTimeout = 2 * time.Second

// serveHTTP serves h on addr until ctx ends; it returns once the port is closed.
func serveHTTP(ctx context.Context, addr string, h http.Handler, rep supervisor.Reporter, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := newHTTPServer(h, httpDefaults, nil, log)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(guardPlayer(ln, log)) }()
	rep.SetState(supervisor.Running)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), playerShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
