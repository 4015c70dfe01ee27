package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/protocols/rtmp"
	"github.com/sluicemedia/sluice/storage"
)

// errNotBuilt is what a part reports until its media path is built.
type errNotBuilt struct{ what string }

func (e errNotBuilt) Error() string { return e.what + " is not built in this version" }

// notBuilt is a part that fails at once, saying what is missing.
func notBuilt(what string) Part {
	return Part{Name: "output", Run: func(context.Context, supervisor.Reporter) error {
		return supervisor.Permanent(errNotBuilt{what})
	}}
}

// mediaRunners builds the pipeline of every record kind.
func mediaRunners(cfg Config, h *hub, log *slog.Logger) RunnerFactory {
	in := &inputs{cfg: cfg, hub: h, log: log}
	return func(rec storage.Record) (*Pipeline, error) {
		plog := log.With("module", string(rec.Module()), "id", rec.Meta().ID, "name", rec.UniqueName())
		switch r := rec.(type) {
		case *storage.RTMPServer:
			return rtmpServerPipeline(r, h, plog), nil
		case *storage.Player:
			return processPipeline(in, r.ID, r.Input, plog, notBuilt("the HLS/DASH packager"))
		case *storage.Restream:
			return processPipeline(in, r.ID, r.Input, plog, notBuilt("the restream output"))
		case *storage.Recording:
			return processPipeline(in, r.ID, r.Input, plog, notBuilt("the recorder"))
		}
		return &Pipeline{Input: &Part{Name: "server", Run: func(context.Context, supervisor.Reporter) error {
			return supervisor.Permanent(errNotBuilt{fmt.Sprintf("the %s module", rec.Module())})
		}}}, nil
	}
}

// processPipeline is an input feeding the process's Stream, and the sinks that read it.
func processPipeline(in *inputs, id string, input storage.Input, log *slog.Logger, sinks ...Part) (*Pipeline, error) {
	s, part, err := in.build(id, input, log.With("input", input.InputType))
	if err != nil {
		return nil, err
	}
	p := &Pipeline{Stream: s, Input: part, Sinks: sinks}
	if part != nil {
		p.Close = s.Close // the process owns its Stream; a server module's stays with the module
	}
	return p, nil
}

// rtmpServerPipeline runs an RTMP server module publishing into its registry.
func rtmpServerPipeline(r *storage.RTMPServer, h *hub, log *slog.Logger) *Pipeline {
	var cur atomic.Pointer[rtmp.Server]
	run := func(ctx context.Context, rep supervisor.Reporter) error {
		srv := &rtmp.Server{ListenAddr: fmt.Sprintf(":%d", r.ServerPort), Registry: h.registry(r.ID), Logger: log}
		cur.Store(srv)
		go func() {
			select {
			case <-srv.Ready():
				rep.SetState(supervisor.Running)
			case <-ctx.Done():
			}
		}()
		return srv.Run(ctx)
	}
	return &Pipeline{
		Input: &Part{Name: "rtmp-server", Run: run},
		Streams: func() []api.ActiveStream {
			srv := cur.Load()
			if srv == nil {
				return []api.ActiveStream{}
			}
			out := []api.ActiveStream{}
			for _, si := range srv.ActiveStreams() {
				out = append(out, api.ActiveStream{StreamID: si.Key, Publisher: si.RemoteAddr, Since: si.Since,
					Bitrate: si.Bitrate, Readers: si.Readers})
			}
			return out
		},
	}
}
