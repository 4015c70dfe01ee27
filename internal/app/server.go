package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/console"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/httpserve"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/internal/sysstats"
	"github.com/sluicemedia/sluice/internal/webhooks"
	"github.com/sluicemedia/sluice/storage"
	"github.com/sluicemedia/sluice/transcode"
)

// Options are the parts of Run that tests replace.
type Options struct {
	// Stdout receives the lines meant for the operator: the generated admin password, the API address.
	Stdout io.Writer
	Logger *slog.Logger
	// Runners builds the run function of a process; nil uses the media pipelines.
	Runners RunnerFactory
	// OnReady is called with the API's bound address once the server serves and active records started.
	OnReady func(addr net.Addr)
}

// bootOrder starts server modules before the processes that read from them.
var bootOrder = map[storage.Module]int{
	storage.ModuleSRTServers: 0, storage.ModuleRTMPServers: 0,
	storage.ModuleVOD: 1, storage.ModuleRestream: 1, storage.ModuleRecording: 1,
}

// Run serves until ctx ends, then stops everything within cfg.ShutdownTimeout.
func Run(ctx context.Context, cfg Config, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	out := opts.Stdout
	if out == nil {
		out = io.Discard
	}
	// ffmpeg children run below the server's CPU priority, so that the API and the protocol
	// stacks answer whatever the encoders do (issue 13: 40 test streams starting at once).
	supervisor.SetNice(cfg.FFmpegNice)
	// HTTPS: the certificate is loaded before anything starts, so a bad pair fails the start.
	if err := cfg.startTLS(log); err != nil {
		return err
	}
	st, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, w := range st.Warnings() {
		log.Warn(w)
	}

	generated, err := api.Bootstrap(ctx, st, cfg.AdminPassword)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if generated != "" {
		fmt.Fprintf(out, "admin password (shown once, change it with `sluice passwd`): %s\n", generated)
	}
	stopPruning := startPruning(st, pruneEvery, log)
	defer stopPruning()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (set --addr or SLUICE_ADDR to another address): %w", cfg.Addr, err)
	}
	apiPort := ln.Addr().(*net.TCPAddr).Port
	if err := st.ReplaceClaims(ctx, storage.ModuleAPI, "api", "api", []storage.PortKey{{Port: apiPort, Transport: storage.TCP}}); err != nil {
		log.Warn("cannot record the API port claim", "port", apiPort, "err", err)
	}
	ln = guardAPI(ln, log)

	if cfg.DebugAddr != "" {
		stopDebug, err := serveDebug(cfg.DebugAddr, log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopDebug()
	}

	// The event path: the hub stores and fans out events; the deliverer POSTs the webhooks'
	// outbox. Both outlive the processes' stop, so the last state events are stored.
	deliverer := webhooks.New(st, withLog(webhookOptions(cfg), log.With("part", "webhooks")))
	evHub := events.New(st, events.Options{StatsEvery: cfg.EventStatsEvery, OnStored: deliverer.Wake, Log: log.With("part", "events")})
	emit := emitter(evHub.Emit)
	evCtx, stopEvents := context.WithCancel(context.Background())
	var evWG sync.WaitGroup
	evWG.Go(func() { _ = deliverer.Run(evCtx) })
	defer func() {
		stopEvents()
		evWG.Wait()
	}()

	h := newHub(stream.Options{Log: log})
	hw := transcode.ProbeHW(ctx, cfg.FFmpeg)
	log.Info("hardware encoders", "available", hw.Available())
	tr := &transcoder{ffmpeg: cfg.FFmpeg, hw: hw, opts: h.opts}
	site, err := console.New()
	if err != nil {
		ln.Close()
		return err
	}
	if !site.Built() {
		log.Warn("web console assets not built: the console and watch pages answer 503; run make console", "missing", site.Missing())
	}
	pb := newPlayback(site)
	repaired := &bootRepairs{}
	runners := opts.Runners
	if runners == nil {
		runners = mediaRunners(cfg, st, h, tr, pb, repaired, emit, log)
	}
	mgr := NewManager(st, runners, cfg.RecordingsDir(), log)
	mgr.emit = emit
	mgr.bind = cfg.MediaBind
	mgr.checkTranscoding = tr.check
	checkIn := &inputs{cfg: cfg, store: st, hub: h, log: log}
	mgr.checkOutputs = func(rec storage.Record) error {
		switch r := rec.(type) {
		case *storage.Restream:
			return checkRestream(checkIn, r)
		case *storage.Recording:
			return checkRecording(checkIn, r)
		}
		return nil
	}
	// With a PostgreSQL store this server is a node of a cluster (issue 17).
	var cl *clusterNode
	if storage.IsPostgresURL(cfg.Store) {
		cl, err = openCluster(ctx, cfg, st, mgr, log)
		if err != nil {
			ln.Close()
			return err
		}
		mgr.cl = cl
		pb.SetElsewhere(cl.Elsewhere, cl.fwd.Forward)
		// The recorded files this node writes are its own (downloads through other nodes).
		st.SetNode(cl.Node().ID())
		defer func() { _ = cl.Node().Close() }()
	}
	utils := &Utilities{DataDir: cfg.Data, APIPort: apiPort, Manager: mgr, Store: st,
		Speed: &sysstats.SpeedTester{URL: cfg.SpeedtestURL, Command: cfg.SpeedtestCmd}}
	evHub.SetStats(utils.ServerStat)
	// Events emitted before wait in the hub's queue.
	evWG.Go(func() {
		if err := evHub.Run(evCtx); err != nil {
			log.Error("event hub", "error", err)
		}
	})

	met, stopMetrics, err := startMetrics(cfg, mgr, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopMetrics()
	if met.port != 0 {
		keys := []storage.PortKey{{Port: apiPort, Transport: storage.TCP}, {Port: met.port, Transport: storage.TCP}}
		if err := st.ReplaceClaims(ctx, storage.ModuleAPI, "api", "api", keys); err != nil {
			log.Warn("cannot record the metrics port claim", "port", met.port, "err", err)
		}
	}

	var ready atomic.Bool
	publicHost := ""
	if cfg.PublicURL != "" {
		if u, err := url.Parse(cfg.PublicURL); err == nil {
			publicHost = u.Hostname()
		}
	}
	handler, err := api.New(api.Config{
		Store:      st,
		Procs:      mgr,
		Utils:      utils,
		Playback:   pb,
		Console:    site.Handler(),
		PublicHost: publicHost,
		HTTPS:      cfg.TLS.On(),
		TokenTTL:   cfg.TokenTTL,
		Ready:      ready.Load,
		// INPUT_TYPE_OTHER: which ffmpeg protocols, and whether local files.
		InputSchemes:    cfg.InputSchemes,
		AllowLocalFiles: cfg.AllowLocalFiles,
		URLChecks:       urlChecks,
		Logger:          log,
		Metrics:         met.onAPIPort(),
		Observer:        met.observer(),
		Events:          evHub,
		Webhooks:        &webhookBackend{store: st, wake: deliverer.Wake},
		Changes:         apiChanges{emit: emit},
		Cluster:         apiCluster(cl),
	})
	if err != nil {
		ln.Close()
		return err
	}
	srv := httpserve.New(handler, httpDefaults, isUpload, log)
	// Event streams never end by themselves: a shutdown ends them.
	srv.RegisterOnShutdown(evHub.Close)
	serveErr := make(chan error, 1)
	go func() { serveErr <- cfg.TLS.serve(srv, ln) }()

	repairRecordings(ctx, st, cfg.RecordingsDir(), repaired, emit, log)
	// A cluster node starts the records placed on it from its rounds (orphans), not at boot.
	clCtx, stopCluster := context.WithCancel(context.Background())
	var clWG sync.WaitGroup
	if cl != nil {
		clWG.Go(func() { cl.Run(clCtx) })
	} else if err := bootActive(ctx, st, mgr, log); err != nil {
		log.Error("starting active records", "err", err)
	}
	ready.Store(true)
	fmt.Fprintf(out, "sluice %s: API at %s://%s (data in %s)\n", Version, cfg.TLS.scheme(), displayAddr(ln.Addr()), cfg.Data)
	if opts.OnReady != nil {
		opts.OnReady(ln.Addr())
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-serveErr:
	}
	httpBudget, procBudget := shutdownBudgets(cfg.ShutdownTimeout)
	log.Info("shutting down", "http_budget", httpBudget, "process_budget", procBudget)
	hctx, cancel := context.WithTimeout(context.Background(), httpBudget)
	if err := srv.Shutdown(hctx); err != nil {
		log.Warn("requests still running at the HTTP shutdown deadline; closing their connections", "err", err)
		srv.Close()
	}
	cancel()
	// A fresh budget: a request that used up the HTTP servers' share takes nothing from the
	// processes, so recordings still close their files.
	pctx, cancel := context.WithTimeout(context.Background(), procBudget)
	defer cancel()
	mgr.StopAll(pctx)
	// Then the leases go back at once, and the node leaves, so others take the records now.
	stopCluster()
	clWG.Wait()
	if cl != nil {
		lctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cl.Leave(lctx)
		cancel()
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return runErr
}

// apiCluster is the API's view of the cluster node: nil on a single node.
func apiCluster(cl *clusterNode) api.Cluster {
	if cl == nil {
		return nil
	}
	return cl
}

// shutdownBudgets splits --shutdown-timeout: the HTTP servers get a quarter to finish their
// requests (then their connections are closed), and the processes get the other three
// quarters, on a fresh deadline that starts when the HTTP servers are done. The server exits
// within the whole timeout.
func shutdownBudgets(total time.Duration) (httpBudget, procBudget time.Duration) {
	httpBudget = total / 4
	return httpBudget, total - httpBudget
}

// httpDefaults are the limits of every sluice HTTP server; tests of the timeouts shorten them
// (TestMain, before any server starts).
var httpDefaults = httpserve.Defaults()

// isUpload tells the API port's streaming uploads: the speed-test peer's upload, up to 256 MiB.
func isUpload(r *http.Request) bool { return r.URL.Path == "/api/utils/speedtest/upload" }

// bootActive starts every record with active=true, server modules first.
func bootActive(ctx context.Context, st *storage.Store, mgr *Manager, log *slog.Logger) error {
	refs, err := st.ListActive(ctx)
	if err != nil {
		return err
	}
	sort.SliceStable(refs, func(i, j int) bool { return bootOrder[refs[i].Module] < bootOrder[refs[j].Module] })
	for _, ref := range refs {
		if _, runs := bootOrder[ref.Module]; !runs {
			continue // webhooks run nothing
		}
		// The API already serves: a request may change the record meanwhile.
		unlock, err := mgr.Lock(ctx, ref.Module, ref.ID)
		if err != nil {
			return err
		}
		err = mgr.Start(ctx, ref.Module, ref.ID)
		unlock()
		if err != nil {
			log.Error("start at boot", "module", string(ref.Module), "id", ref.ID, "name", recordName(ctx, st, ref), "err", err)
		}
	}
	log.Info("active records started", "count", len(refs))
	return nil
}

func displayAddr(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	host := "localhost"
	if !ta.IP.IsUnspecified() {
		host = ta.IP.String()
	}
	return net.JoinHostPort(host, fmt.Sprint(ta.Port))
}
