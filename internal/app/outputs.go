package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/protocols/httpts"
	"github.com/sluicemedia/sluice/protocols/rtmp"
	"github.com/sluicemedia/sluice/protocols/rtsp"
	"github.com/sluicemedia/sluice/protocols/srt"
	"github.com/sluicemedia/sluice/protocols/udp"
	"github.com/sluicemedia/sluice/storage"
)

// sendFunc delivers a reader's units to one destination until ctx ends or it fails.
type sendFunc func(ctx context.Context, r *stream.Reader, tracks []media.Track) error

// outputs builds the output side of restreams.
type outputs struct {
	store *storage.Store
	hub   *hub
	emit  emitter // publisher events of the local RTMP server module an output publishes to
}

// part returns the supervised part that reads s and delivers it to out.
func (o *outputs) part(s *stream.Stream, out storage.Output, log *slog.Logger) (Part, error) {
	var probe *srt.Probe
	if out.OutputType == kinds.OutputSRTURL {
		probe = &srt.Probe{}
	}
	send, err := o.sender(out, probe, log)
	if err != nil {
		return Part{}, err
	}
	return Part{Name: "output", Links: srtLinks("output", probe), Run: func(ctx context.Context, rep supervisor.Reporter) error {
		r, err := s.NewReader("restream output")
		if err != nil {
			return err
		}
		defer r.Close()
		tracks, err := waitTracks(ctx, s)
		if err != nil || ctx.Err() != nil {
			return nil
		}
		rep.SetState(supervisor.Running)
		err = send(ctx, r, tracks)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			return errors.New("output ended")
		}
		return err
	}}, nil
}

// waitTracks returns the stream's tracks once a publisher has set them.
func waitTracks(ctx context.Context, s *stream.Stream) ([]media.Track, error) {
	for {
		tracks, changed := s.WatchTracks()
		if len(tracks) > 0 {
			return tracks, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// sendWith binds a protocol output's entry point to its options.
func sendWith[O any](send func(context.Context, *stream.Reader, []media.Track, O) error, o O) sendFunc {
	return func(ctx context.Context, r *stream.Reader, tracks []media.Track) error {
		return send(ctx, r, tracks, o)
	}
}

// sender maps an output type to its protocol; probe reports an SRT output's link.
func (o *outputs) sender(out storage.Output, probe *srt.Probe, log *slog.Logger) (sendFunc, error) {
	target := out.OutputStreamURL
	switch out.OutputType {
	case kinds.OutputOtherRTMPURL:
		return sendWith(rtmp.Push, rtmp.PushOptions{URL: target, Key: out.OutputStreamKey, Log: log}), nil
	case kinds.OutputLocalRTMPURL:
		return o.localRTMP(out)
	case kinds.OutputRTSPURL:
		return sendWith(rtsp.Push, rtsp.PushOptions{URL: target, Log: log}), nil
	case kinds.OutputSRTURL:
		return sendWith(srt.Send, srt.SendOptions{URL: target, Log: log, Probe: probe}), nil
	case kinds.OutputUDPURL:
		return sendWith(udp.Send, udp.SendOptions{URL: target, Log: log}), nil
	case kinds.OutputRTPURL:
		return sendWith(udp.SendRTP, udp.SendOptions{URL: target, Log: log}), nil
	case kinds.OutputHTTPURL:
		u, method, err := httpMethod(target)
		if err != nil {
			return nil, err
		}
		return sendWith(httpts.Send, httpts.SendOptions{URL: u, Method: method, Log: log}), nil
	}
	return nil, fmt.Errorf("output type %s is not built in this version", out.OutputType)
}

// httpMethod takes the method=PUT option out of an HTTP output URL. The rest of the query is
// kept as written, in order: a server may check a signature over it.
func httpMethod(raw string) (string, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("output_stream_url: %w", redact.Error(err, raw))
	}
	method := ""
	var kept []string
	for kv := range strings.SplitSeq(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k != "method" {
			kept = append(kept, kv)
			continue
		}
		if method == "" {
			method, _ = url.QueryUnescape(v)
			method = strings.ToUpper(method)
		}
	}
	switch method {
	case "", "POST":
		method = "POST"
	case "PUT":
	default:
		return "", "", fmt.Errorf("output_stream_url: method=%s: only POST and PUT are supported", method)
	}
	u.RawQuery = strings.Join(kept, "&")
	return u.String(), method, nil
}

// localRTMP publishes into one of the server's own RTMP modules, in process: the module is the
// one whose port the URL names; the stream key is output_stream_key or the URL's last element,
// without a query, as the RTMP server takes it. In process, the module's publish password is
// not asked for: the API's user who set up the restream may set the module's too.
func (o *outputs) localRTMP(out storage.Output) (sendFunc, error) {
	u, err := url.Parse(out.OutputStreamURL)
	if err != nil {
		return nil, fmt.Errorf("output_stream_url: %w", redact.Error(err, out.OutputStreamURL))
	}
	port := 1935
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("output_stream_url: port %q", p)
		}
	}
	key := out.OutputStreamKey
	if key == "" {
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		if len(parts) < 2 {
			return nil, fmt.Errorf("output_stream_url %q names no stream key (rtmp://host:port/live/<key>, or set output_stream_key)", redact.URL(out.OutputStreamURL))
		}
		key = parts[len(parts)-1]
	}
	key, _, _ = strings.Cut(key, "?")
	if key == "" {
		return nil, fmt.Errorf("output_stream_key %q names no stream key", redact.URL(out.OutputStreamKey))
	}
	return func(ctx context.Context, r *stream.Reader, _ []media.Track) error {
		servers, err := storage.List[storage.RTMPServer](ctx, o.store, storage.ModuleRTMPServers)
		if err != nil {
			return err
		}
		var mod *storage.RTMPServer
		for i := range servers {
			if servers[i].ServerPort == port {
				mod = servers[i]
			}
		}
		if mod == nil {
			return fmt.Errorf("no RTMP server module of this server listens on port %d", port)
		}
		pub, err := o.hub.registry(mod.ID).Publish(key)
		if err != nil {
			return fmt.Errorf("publish %q to the local RTMP module on port %d: %w", key, port, err)
		}
		defer pub.Close()
		// The module's publisher events, as its RTMP server sends them for a remote publisher:
		// disconnected before the key is free again.
		ev := publisherEvents{about{storage.ModuleRTMPServers, mod.ID, mod.ServerName}, o.emit}
		ev.PublisherConnected(key, localPublisher)
		defer ev.PublisherDisconnected(key, localPublisher)
		return relay(ctx, r, pub)
	}, nil
}

// relay copies units from a reader to a publisher of another stream. The publisher normalises
// what it writes, so each unit is a shallow copy: the payload stays shared.
func relay(ctx context.Context, r *stream.Reader, pub *stream.Publisher) error {
	src := r.Stream()
	var tracks []media.Track
	for {
		au, err := r.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if cur := src.Tracks(); len(tracks) == 0 || au.Discontinuity {
			tracks = cur
			if err := pub.SetTracks(tracks); err != nil {
				return err
			}
		}
		cp := *au
		cp.Discontinuity = false
		if err := pub.Write(&cp); err != nil {
			return err
		}
	}
}
