package api

import (
	"errors"
	"net/url"
	"strings"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

// maxURL bounds stream addresses.
const maxURL = 4096

// validateInput reads an input object (spec 2.1). Only the fields its type uses are kept.
func validateInput(f *fields) storage.Input {
	var in storage.Input
	typ, _ := f.enum("input_type", true, kinds.InputTypes()...)
	kind, _ := kinds.InputOf(typ)
	in.InputType = typ
	in.ModuleName, _ = f.text("module_name", false, 256)
	in.ModuleType, _ = f.text("module_type", false, 256)
	f.alias("input_server_id", "input_module_id")
	switch {
	case !f.ok():
	case kind.Server != "":
		in.InputServerID, in.InputStreamID = validateServerInput(f, kind.Server)
	case kind.Listen != "":
		in.InputStreamListenPort = validateListenPort(f, true, kind.Listen)
		in.InputStreamURL = streamURL(f, "input_stream_url", false, kind.Schemes, false, true)
	case typ == kinds.InputOther:
		in.InputStreamURL = otherURL(f)
	case typ == kinds.InputGenerateVideo:
		validateTestVideo(f, &in)
	default:
		in.InputStreamURL = streamURL(f, "input_stream_url", true, kind.Schemes, kind.NeedsHost, false)
		// A pull input may also name the port it listens on (SRT with mode=listener).
		in.InputStreamListenPort = validateListenPort(f, false, "")
	}
	f.done()
	return in
}

// validateListenPort reads input_stream_listen_port; want, when set, is the only transport allowed.
func validateListenPort(f *fields, req bool, want string) *storage.ListenPort {
	o := f.object("input_stream_listen_port", req, false)
	if o == nil {
		return nil
	}
	port, _ := o.intIn("port", true, 1, 65535)
	tr, ok := o.str("transport", true)
	tr = strings.ToUpper(strings.TrimSpace(tr))
	switch {
	case !ok:
	case tr != storage.UDP && tr != storage.TCP:
		o.fail("transport", "must be UDP or TCP")
	case want != "" && tr != want:
		o.fail("transport", "must be %s for this input type", want)
	}
	o.done()
	if !f.ok() {
		return nil
	}
	return &storage.ListenPort{Port: port, Transport: tr}
}

// validateServerInput reads the server-module reference of an *_SOFTWARE/*_HARDWARE input.
func validateServerInput(f *fields, kind string) (serverID, streamID string) {
	id, ok := f.objectID("input_server_id", true)
	if !ok {
		return "", ""
	}
	var prefix string
	if kind == "srt" {
		var srv storage.SRTServer
		err := f.vc.store.Get(f.vc.ctx, storage.ModuleSRTServers, id, &srv)
		if !f.serverFound(err, "SRT") {
			return "", ""
		}
		prefix = srv.PublisherPrefix
	} else {
		var srv storage.RTMPServer
		if !f.serverFound(f.vc.store.Get(f.vc.ctx, storage.ModuleRTMPServers, id, &srv), "RTMP") {
			return "", ""
		}
	}
	sid, ok := f.text("input_stream_id", true, 512)
	if !ok {
		return "", ""
	}
	if strings.ContainsFunc(sid, isSpace) {
		f.fail("input_stream_id", "must not contain spaces")
		return "", ""
	}
	if kind == "srt" && !validSRTStreamID(sid, prefix) {
		f.fail("input_stream_id", "must be %s/<server-slug>/<stream-name> or #!::r=<stream-name>,m=publish", prefixOr(prefix))
		return "", ""
	}
	return id, sid
}

// serverFound turns the result of looking up a referenced server into a validation error.
func (f *fields) serverFound(err error, what string) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, storage.ErrNotFound):
		f.fail("input_server_id", "no %s server module has this id", what)
	default:
		// A store failure is not the client's fault: report it as such.
		if f.vc.err == nil {
			f.vc.err = &apiError{Status: 500, Code: CodeInternal, Message: "internal error; see the server log"}
			f.vc.internal = err
		}
	}
	return false
}

func prefixOr(p string) string {
	if p == "" {
		return "publisher"
	}
	return p
}

// validSRTStreamID accepts publisher/<slug>/<name> and the Haivision #!::r=<name>,m=publish form.
func validSRTStreamID(sid, prefix string) bool {
	if rest, ok := strings.CutPrefix(sid, "#!::"); ok {
		var name, mode string
		for kv := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "r":
				name = v
			case "m":
				mode = v
			}
		}
		return name != "" && (mode == "publish" || mode == "request")
	}
	parts := strings.Split(sid, "/")
	return len(parts) == 3 && parts[0] == prefixOr(prefix) && parts[1] != "" && parts[2] != ""
}

// streamURL reads an address whose scheme must be one of schemes; the server's URL check for
// that scheme, if any, checks its options (listen: the address of a listen input).
func streamURL(f *fields, key string, req bool, schemes []string, needsHost, listen bool) string {
	s, ok := f.text(key, req, maxURL)
	if !ok {
		return ""
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		f.fail(key, "is not a valid URL")
	case !containsFold(schemes, u.Scheme):
		f.fail(key, "must be a %s:// URL", strings.Join(schemes, ":// or "))
	case u.Opaque != "" || u.Host == "":
		f.fail(key, "must name a host or a port (%s://host:port)", strings.ToLower(u.Scheme))
	case needsHost && u.Hostname() == "":
		f.fail(key, "must name a host")
	default:
		if check := f.vc.urlChecks[strings.ToLower(u.Scheme)]; check != nil {
			if err := check(s, listen); err != nil {
				f.fail(key, "%s", err.Error())
				return ""
			}
		}
		return s
	}
	return ""
}

// otherURL reads the address of an INPUT_TYPE_OTHER input: ffmpeg opens it, so it must not
// look like an option and must pass the server's InputPolicy (no local files by default).
func otherURL(f *fields) string {
	s, ok := f.text("input_stream_url", true, maxURL)
	if !ok {
		return ""
	}
	if err := f.vc.inputs.Check(s); err != nil {
		f.fail("input_stream_url", "%s", err.Error())
		return ""
	}
	return s
}

func validateTestVideo(f *fields, in *storage.Input) {
	in.EncodingRate = f.intDefault("encoding_rate", 1, 120, 24)
	in.SoundHz = f.intDefault("sound_hz", 1, 20000, 216)
	in.ResolutionWidth = f.intDefault("resolution_width", 16, 7680, 1920)
	in.ResolutionHeight = f.intDefault("resolution_height", 16, 4320, 1080)
	in.VideoDurationSec = f.intDefault("video_duration_sec", 1, 604800, 3600)
	in.TestVideoBitrate = f.intDefault("test_video_bitrate", 50, 100000, 6000)
	if in.ResolutionWidth%2 != 0 {
		f.fail("resolution_width", "must be an even number")
	}
	if in.ResolutionHeight%2 != 0 {
		f.fail("resolution_height", "must be an even number")
	}
}

func containsFold(list []string, s string) bool {
	for _, e := range list {
		if strings.EqualFold(e, s) {
			return true
		}
	}
	return false
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\u00a0' }
