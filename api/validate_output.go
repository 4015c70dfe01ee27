package api

import "github.com/sluicemedia/sluice/storage"

// Output types of spec 2.3.
const (
	OutputLocalRTMPURL = "OUTPUT_TYPE_LOCAL_RTMP_URL"
	OutputOtherRTMPURL = "OUTPUT_TYPE_OTHER_RTMP_URL"
	OutputRTSPURL      = "OUTPUT_TYPE_RTSP_URL"
	OutputSRTURL       = "OUTPUT_TYPE_SRT_URL"
	OutputUDPURL       = "OUTPUT_TYPE_UDP_URL"
	OutputHTTPURL      = "OUTPUT_TYPE_HTTP_URL"
	OutputRTPURL       = "OUTPUT_TYPE_RTP_URL"
)

type outputKind struct {
	word      string
	schemes   []string
	needsHost bool
}

var outputKinds = map[string]outputKind{
	OutputLocalRTMPURL: {word: "RTMP", schemes: []string{"rtmp", "rtmps"}, needsHost: true},
	OutputOtherRTMPURL: {word: "RTMP", schemes: []string{"rtmp", "rtmps"}, needsHost: true},
	OutputRTSPURL:      {word: "RTSP", schemes: []string{"rtsp", "rtsps"}, needsHost: true},
	OutputSRTURL:       {word: "SRT", schemes: []string{"srt"}},
	OutputUDPURL:       {word: "UDP", schemes: []string{"udp"}},
	OutputHTTPURL:      {word: "HTTP", schemes: []string{"http", "https"}, needsHost: true},
	OutputRTPURL:       {word: "RTP", schemes: []string{"rtp"}},
}

var outputTypes = []string{
	OutputLocalRTMPURL, OutputOtherRTMPURL, OutputRTSPURL, OutputSRTURL, OutputUDPURL, OutputHTTPURL, OutputRTPURL,
}

// validateOutput reads a restream output object (spec 2.3).
func validateOutput(f *fields) storage.Output {
	var out storage.Output
	typ, _ := f.enum("output_type", true, outputTypes...)
	out.OutputType = typ
	if kind, ok := outputKinds[typ]; ok {
		out.OutputStreamURL = streamURL(f, "output_stream_url", true, kind.schemes, kind.needsHost, false)
	}
	out.OutputStreamKey, _ = f.text("output_stream_key", false, 1024)
	f.done()
	return out
}
