package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/metrics"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/protocols/rtmp"
	"github.com/sluicemedia/sluice/protocols/srt"
	"github.com/sluicemedia/sluice/storage"
)

// errNotBuilt is what a part reports until its media path is built.
type errNotBuilt struct{ what string }

func (e errNotBuilt) Error() string { return e.what + " is not built in this version" }

// mediaRunners builds the pipeline of every record kind.
func mediaRunners(cfg Config, st *storage.Store, h *hub, tr *transcoder, pb *playback, repaired *bootRepairs, emit emitter, log *slog.Logger) RunnerFactory {
	in := &inputs{cfg: cfg, store: st, hub: h, log: log}
	outs := &outputs{store: st, hub: h, emit: emit}
	return func(rec storage.Record) (*Pipeline, error) {
		plog := log.With("module", string(rec.Module()), "id", rec.Meta().ID, "name", rec.UniqueName())
		switch r := rec.(type) {
		case *storage.RTMPServer:
			h.registryLog(r.ID, plog)
			return rtmpServerPipeline(r, cfg.mediaAddr(r.ServerPort), h, publisherEvents{about{r.Module(), r.ID, r.ServerName}, emit}, plog), nil
		case *storage.SRTServer:
			h.registryLog(r.ID, plog)
			return srtServerPipeline(r, cfg.mediaAddr(r.ServerPort), h, publisherEvents{about{r.Module(), r.ID, r.ServerName}, emit}, plog), nil
		case *storage.Player:
			return playerPipeline(in, tr, pb, r, emit, plog)
		case *storage.Restream:
			return restreamPipeline(in, tr, outs, r, plog)
		case *storage.Recording:
			return recordingPipeline(in, tr, st, cfg.RecordingsDir(), r, repaired, emit, plog)
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

// restreamPipeline is an input and one output; without transcoding the output is a native
// remux of the input.
func restreamPipeline(in *inputs, tr *transcoder, outs *outputs, r *storage.Restream, log *slog.Logger) (*Pipeline, error) {
	p, err := processPipeline(in, r.ID, r.Input, log)
	if err != nil {
		return nil, err
	}
	src := tr.attach(p, r.ID, r.Transcoding, log)
	out, err := outs.part(src, r.Output, log.With("output", r.Output.OutputType))
	if err != nil {
		if p.Close != nil {
			p.Close()
		}
		return nil, err
	}
	p.Sinks = append(p.Sinks, out)
	return p, nil
}

// rtmpServerPipeline runs an RTMP server module on addr publishing into its registry.
// Its publishing sessions are told to pubs.
func rtmpServerPipeline(r *storage.RTMPServer, addr string, h *hub, pubs rtmp.Publishers, log *slog.Logger) *Pipeline {
	var cur atomic.Pointer[rtmp.Server]
	run := func(ctx context.Context, rep supervisor.Reporter) error {
		srv := &rtmp.Server{ListenAddr: addr, Registry: h.registry(r.ID), Publishers: pubs, Log: log,
			PublishPassword: r.ServerPublishPassword, PlayPassword: r.ServerPlayPassword}
		cur.Store(srv)
		// The watcher ends with the attempt, not with the supervisor: a failed attempt must
		// not leave it behind.
		actx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() {
			select {
			case <-srv.Ready():
				rep.SetState(supervisor.Running)
			case <-actx.Done():
			}
		})
		err := srv.Run(ctx)
		cancel()
		wg.Wait()
		return err
	}
	return &Pipeline{
		Input:   &Part{Name: "rtmp-server", Run: run},
		Figures: []func(*metrics.Process){registrySessions(h, r.ID)},
		Streams: func() []api.ActiveStream {
			out := []api.ActiveStream{}
			seen := map[string]bool{}
			if srv := cur.Load(); srv != nil {
				for _, si := range srv.ActiveStreams() {
					seen[si.Key] = true
					out = append(out, api.ActiveStream{StreamID: si.Key, Publisher: si.RemoteAddr, Since: si.Since,
						Bitrate: si.Bitrate, Readers: si.Readers})
				}
			}
			// Streams published in process (OUTPUT_TYPE_LOCAL_RTMP_URL restreams).
			for _, s := range h.registry(r.ID).List() {
				if st := s.Stats(); st.Publishing && !seen[s.Name()] {
					out = append(out, api.ActiveStream{StreamID: s.Name(), Publisher: "local", Since: st.Since,
						Bitrate: st.Bitrate, Readers: st.Readers})
				}
			}
			return out
		},
	}
}

// srtServerPipeline runs an SRT server module on addr publishing into its registry.
// Its publisher sessions are told to pubs.
func srtServerPipeline(r *storage.SRTServer, addr string, h *hub, pubs srt.Publishers, log *slog.Logger) *Pipeline {
	var cur atomic.Pointer[srt.Server]
	run := func(ctx context.Context, rep supervisor.Reporter) error {
		srv, err := srt.NewServer(srt.ServerConfig{
			Name: r.ServerName, Addr: addr,
			Options: srt.Options{
				Latency: time.Duration(r.ServerLatency) * time.Millisecond, Passphrase: r.ServerPassphrase,
				PBKeyLen: r.ServerPbkeylen, MaxBW: r.ServerMaxbw, PeerIdleTimeout: time.Duration(r.ServerTimeout) * time.Second,
			},
			PublisherPrefix: r.PublisherPrefix, ReceiverPrefix: r.ReceiverPrefix, Publishers: pubs, Log: log,
		}, h.registry(r.ID))
		if err != nil {
			return err
		}
		cur.Store(srv)
		rep.SetState(supervisor.Running)
		return srv.Run(ctx)
	}
	publishers := func(p *metrics.Process) {
		if srv := cur.Load(); srv != nil {
			for _, si := range srv.ActiveStreams() {
				p.Links = append(p.Links, metricsLink(srtLink("publisher", si.PublisherAddr, si.Link), si.Name))
			}
		}
	}
	return &Pipeline{
		Input:   &Part{Name: "srt-server", Run: run},
		Figures: []func(*metrics.Process){registrySessions(h, r.ID), publishers},
		Streams: func() []api.ActiveStream {
			out := []api.ActiveStream{}
			srv := cur.Load()
			if srv == nil {
				return out
			}
			for _, si := range srv.ActiveStreams() {
				link := srtLink("publisher", si.PublisherAddr, si.Link)
				lost, retr := int64(link.PacketsLost), int64(link.PacketsRetransmitted)
				out = append(out, api.ActiveStream{StreamID: si.StreamID, Publisher: si.PublisherAddr, Since: si.Since,
					Bitrate: si.Bitrate, Readers: si.Readers, RTTMs: &link.RTTMs, PacketsLost: &lost, Retransmitted: &retr, SRT: &link})
			}
			return out
		},
	}
}
