package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/console"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/httpserve"
	"github.com/sluicemedia/sluice/internal/player"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/storage"
)

// playback is the main port's router to the running players, and the site their watch pages
// come from.
type playback struct {
	*player.Router
	site *console.Site
}

func newPlayback(site *console.Site) *playback {
	return &playback{Router: player.NewRouter(), site: site}
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

	files := player.New(player.Options{ID: r.ID, Name: r.VodName,
		InitialSegments: r.InitialLiveManifestSize, LiveSyncCount: r.LiveSyncDurationCount,
		LowLatency: r.LowLatency, PartTarget: time.Duration(r.PartDurationMS) * time.Millisecond,
		HLS:      player.Format{FragmentSize: seconds(r.HLSFragmentSize), Window: seconds(r.HLSFragmentLength)},
		DASH:     player.Format{FragmentSize: seconds(r.DASHFragmentSize), Window: seconds(r.DASHFragmentLength)},
		MaxBytes: in.cfg.PlayerMaxBytes, Site: pb.site, Log: log})

	// ready: player_ready was sent for this run of the player.
	var ready atomic.Bool
	packager := Part{Name: "packager", Run: func(ctx context.Context, rep supervisor.Reporter) error {
		rd, err := src.NewReader("player packager")
		if err != nil {
			return err
		}
		defer rd.Close()
		sgs := files.Segmenters()
		rep.SetState(supervisor.Running)
		if emit != nil && !ready.Load() {
			wctx, cancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { watchReady(wctx, files.HLSStore(), r, &ready, emit) })
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
		return serveHTTP(ctx, in.cfg.mediaAddr(r.VodPort), files, &in.cfg.TLS, rep, log)
	}}
	p.Sinks = append(p.Sinks, packager, vodPort)
	p.Figures = append(p.Figures, playerFigures(files.Stores(), files.Counters()))
	pb.Set(r.ID, files)
	prev := p.Close
	p.Close = func() {
		pb.Set(r.ID, nil)
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

// serveHTTP serves h on addr until ctx ends, over HTTPS with HTTP/2 when tls has a certificate;
// it returns once the port is closed.
func serveHTTP(ctx context.Context, addr string, h http.Handler, tls *TLSSettings, rep supervisor.Reporter, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := httpserve.New(h, httpDefaults, nil, log)
	done := make(chan error, 1)
	go func() { done <- tls.serve(srv, guardPlayer(ln, log)) }()
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
