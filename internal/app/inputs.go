package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/protocols/dash"
	"github.com/sluicemedia/sluice/protocols/ffin"
	"github.com/sluicemedia/sluice/protocols/hls"
	"github.com/sluicemedia/sluice/protocols/httpts"
	"github.com/sluicemedia/sluice/protocols/rtmp"
	"github.com/sluicemedia/sluice/protocols/rtsp"
	"github.com/sluicemedia/sluice/protocols/srt"
	"github.com/sluicemedia/sluice/protocols/testsrc"
	"github.com/sluicemedia/sluice/protocols/udp"
	"github.com/sluicemedia/sluice/storage"
)

// inputs builds the input side of process pipelines.
type inputs struct {
	cfg   Config
	store *storage.Store
	hub   *hub
	log   *slog.Logger
}

// sourceFunc is a protocol input: it publishes into s until ctx ends, or until the remote
// ends (nil) or fails (an error).
type sourceFunc func(ctx context.Context, s *stream.Stream) error

// build returns the Stream a process reads and the part that feeds it (nil when a server
// module feeds it).
func (in *inputs) build(id string, input storage.Input, log *slog.Logger) (*stream.Stream, *Part, error) {
	if kind, _ := kinds.InputOf(input.InputType); kind.Server != "" {
		name, err := in.moduleStreamName(input, kind)
		if err != nil {
			return nil, nil, err
		}
		s := in.hub.registry(input.InputServerID).GetOrCreate(name)
		// The repair belongs to the published stream, which several processes may read: one
		// *_HARDWARE reader turns it on for the stream's next publishers, and it stays on.
		if kind.Hardware {
			s.SetHardware(true)
		}
		return s, nil, nil
	}
	var probe *srt.Probe
	if input.InputType == kinds.InputSRTListen || input.InputType == kinds.InputSRTURL {
		probe = &srt.Probe{}
	}
	src, err := in.source(input, probe, log)
	if err != nil {
		return nil, nil, err
	}
	s := stream.New(id, in.streamOptions(log))
	return s, &Part{Name: "input", Run: runSource(src, s), Links: srtLinks("input", probe)}, nil
}

func (in *inputs) streamOptions(log *slog.Logger) stream.Options {
	o := in.hub.opts
	o.Log = log
	return o
}

// listenAddr is the address a listen input binds: --media-bind (every interface by default),
// on its port.
func (in *inputs) listenAddr(input storage.Input) string {
	return in.cfg.mediaAddr(input.InputStreamListenPort.Port)
}

// sourceWith binds a protocol input's entry point to its options.
func sourceWith[O any](run func(context.Context, *stream.Stream, O) error, o O) sourceFunc {
	return func(ctx context.Context, s *stream.Stream) error { return run(ctx, s, o) }
}

// heldAtStart reads the password a listen input's address sets with read, at each start: a
// record stored before the check at create was made is held to it (422).
func heldAtStart(read func(string) (string, error), input storage.Input) (string, error) {
	pw, err := read(input.InputStreamURL)
	if err != nil {
		return "", fmt.Errorf("%w: input_stream_url %w", api.ErrUnsupported, err)
	}
	return pw, nil
}

// source maps an input type to its protocol; probe reports an SRT input's link.
func (in *inputs) source(input storage.Input, probe *srt.Probe, log *slog.Logger) (sourceFunc, error) {
	switch input.InputType {
	case kinds.InputRTMPListen:
		pw, err := heldAtStart(rtmpListenPassword, input)
		return sourceWith(rtmp.Listen, rtmp.ListenOptions{Addr: in.listenAddr(input), Password: pw, Log: log}), err
	case kinds.InputRTMPURL:
		return sourceWith(rtmp.Pull, rtmp.PullOptions{URL: input.InputStreamURL, Log: log}), nil
	case kinds.InputSRTListen:
		opts := srt.Options{}
		if input.InputStreamURL != "" {
			ep, err := srt.ParseListenURL(input.InputStreamURL)
			if err != nil {
				return nil, err
			}
			opts = ep.Options
		}
		return func(ctx context.Context, s *stream.Stream) error {
			l, err := srt.NewListener(s, srt.ListenOptions{Addr: in.listenAddr(input), Options: opts, Log: log, Probe: probe})
			if err != nil {
				return err
			}
			return l.Run(ctx)
		}, nil
	case kinds.InputSRTURL:
		return sourceWith(srt.Pull, srt.PullOptions{URL: input.InputStreamURL, Log: log, Probe: probe}), nil
	case kinds.InputRTSPListen:
		user, pw, err := rtspListenCredentials(input.InputStreamURL)
		if err != nil {
			return nil, fmt.Errorf("%w: input_stream_url %w", api.ErrUnsupported, err)
		}
		return sourceWith(rtsp.Listen, rtsp.ListenOptions{Addr: in.listenAddr(input), User: user, Password: pw, Log: log}), nil
	case kinds.InputRTSPURL:
		return sourceWith(rtsp.Pull, rtsp.PullOptions{URL: input.InputStreamURL, Log: log}), nil
	case kinds.InputUDPListen:
		return sourceWith(udp.Listen, udp.Options{Addr: in.listenAddr(input), Log: log}), nil
	case kinds.InputUDPURL:
		return sourceWith(udp.Pull, udp.Options{URL: input.InputStreamURL, Log: log}), nil
	case kinds.InputHTTPListen:
		pw, err := heldAtStart(httpListenPassword, input)
		return sourceWith(httpts.Listen, httpts.ServerOptions{Addr: in.listenAddr(input), Password: pw, Log: log}), err
	case kinds.InputHTTPURL:
		return sourceWith(httpts.Pull, httpts.PullOptions{URL: input.InputStreamURL, Log: log}), nil
	case kinds.InputHLSURL:
		return sourceWith(hls.Pull, hls.PullOptions{URL: input.InputStreamURL, Log: log}), nil
	case kinds.InputMPEGDASHURL:
		return sourceWith(dash.Pull, dash.PullOptions{URL: input.InputStreamURL, Log: log}), nil
	case kinds.InputOther:
		// Records stored before the policy (or under a wider one) are held to it at each start.
		policy := api.InputPolicy{Schemes: in.cfg.InputSchemes, AllowLocalFiles: in.cfg.AllowLocalFiles}
		if err := policy.Check(input.InputStreamURL); err != nil {
			return nil, fmt.Errorf("%w: input_stream_url %w", api.ErrUnsupported, err)
		}
		return sourceWith(ffin.Run, ffin.Options{FFmpeg: in.cfg.FFmpeg, Address: input.InputStreamURL, Log: log}), nil
	case kinds.InputGenerateVideo:
		p := testsrc.Params{FPS: input.EncodingRate, SoundHz: input.SoundHz, Width: input.ResolutionWidth,
			Height: input.ResolutionHeight, DurationSec: input.VideoDurationSec, BitrateKbps: input.TestVideoBitrate}
		if _, err := testsrc.Args(p); err != nil {
			return nil, err
		}
		return sourceWith(testsrc.Run, testsrc.Options{FFmpeg: in.cfg.FFmpeg, Params: p, Log: log}), nil
	}
	return nil, fmt.Errorf("input type %s is not built in this version", input.InputType)
}

// moduleStreamName is the stream a server module input reads: an RTMP module's is its
// input_stream_id, an SRT module's srtStreamName.
func (in *inputs) moduleStreamName(input storage.Input, kind kinds.Input) (string, error) {
	if kind.Server == kinds.ServerSRT {
		return in.srtStreamName(input)
	}
	return input.InputStreamID, nil
}

// srtStreamName is the stream an SRT module input reads: the name in its input_stream_id
// (publisher/<server-slug>/<name>, the Haivision form, or a bare name), checked against the
// module's prefixes.
func (in *inputs) srtStreamName(input storage.Input) (string, error) {
	srv, err := storage.Load[storage.SRTServer](context.Background(), in.store, storage.ModuleSRTServers, input.InputServerID)
	if err != nil {
		return "", fmt.Errorf("SRT server %s: %w", input.InputServerID, err)
	}
	id, err := srt.ParseStreamID(input.InputStreamID, srv.PublisherPrefix, srv.ReceiverPrefix)
	if err != nil {
		return "", fmt.Errorf("input_stream_id %q: %w", input.InputStreamID, err)
	}
	return id.Name, nil
}

// runSource adapts a source to a supervised part: a remote that ended the stream is an input
// drop (retried at once), anything else a failure (retried with backoff).
func runSource(src sourceFunc, s *stream.Stream) supervisor.RunFunc {
	return func(ctx context.Context, rep supervisor.Reporter) error {
		rep.SetState(supervisor.Running)
		err := src(ctx, s)
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			return fmt.Errorf("input ended: %w", supervisor.ErrInputGone)
		case errors.Is(err, context.Canceled):
			return nil
		}
		return err
	}
}
