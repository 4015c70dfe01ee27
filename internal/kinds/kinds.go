// Package kinds is the one table of the API's input and output types (spec 2.1 and 2.3): their
// names and what each needs, and the form of an RTMP password (a module's, a listen input's).
// api validates records with it and internal/app wires protocols by it. It imports only the
// standard library.
package kinds

import (
	"regexp"
	"slices"
)

// Input types (spec 2.1).
const (
	InputSRTSoftware   = "INPUT_TYPE_SRT_SOFTWARE"
	InputSRTHardware   = "INPUT_TYPE_SRT_HARDWARE"
	InputRTMPSoftware  = "INPUT_TYPE_RTMP_SOFTWARE"
	InputRTMPHardware  = "INPUT_TYPE_RTMP_HARDWARE"
	InputSRTListen     = "INPUT_TYPE_SRT_LISTEN"
	InputRTMPListen    = "INPUT_TYPE_RTMP_LISTEN"
	InputRTSPListen    = "INPUT_TYPE_RTSP_LISTEN"
	InputUDPListen     = "INPUT_TYPE_UDP_LISTEN"
	InputHTTPListen    = "INPUT_TYPE_HTTP_LISTEN"
	InputSRTURL        = "INPUT_TYPE_SRT_URL"
	InputRTMPURL       = "INPUT_TYPE_RTMP_URL"
	InputRTSPURL       = "INPUT_TYPE_RTSP_URL"
	InputUDPURL        = "INPUT_TYPE_UDP_URL"
	InputHTTPURL       = "INPUT_TYPE_HTTP_URL"
	InputHLSURL        = "INPUT_TYPE_HLS_URL"
	InputMPEGDASHURL   = "INPUT_TYPE_MPEG_DASH_URL"
	InputOther         = "INPUT_TYPE_OTHER"
	InputGenerateVideo = "INPUT_TYPE_GENERATE_TEST_VIDEO"
)

// Output types (spec 2.3).
const (
	OutputLocalRTMPURL = "OUTPUT_TYPE_LOCAL_RTMP_URL"
	OutputOtherRTMPURL = "OUTPUT_TYPE_OTHER_RTMP_URL"
	OutputRTSPURL      = "OUTPUT_TYPE_RTSP_URL"
	OutputSRTURL       = "OUTPUT_TYPE_SRT_URL"
	OutputUDPURL       = "OUTPUT_TYPE_UDP_URL"
	OutputHTTPURL      = "OUTPUT_TYPE_HTTP_URL"
	OutputRTPURL       = "OUTPUT_TYPE_RTP_URL"
)

// Transports of a listen port, as records write them.
const (
	TCP = "TCP"
	UDP = "UDP"
)

// Server modules an input may read from.
const (
	ServerSRT  = "srt"
	ServerRTMP = "rtmp"
)

// Input says what an input type needs, and which protocol word names it in restream_type.
type Input struct {
	Word      string   // protocol word of restream_type
	Server    string   // ServerSRT or ServerRTMP for an input that reads a server module's stream
	Hardware  bool     // a server module input that turns on the stream's hardware repair
	Listen    string   // TCP or UDP: the transport a listen input's port must have
	Schemes   []string // URL schemes a pull input accepts (and a listen input's optional URL)
	NeedsHost bool     // the URL must name a host
}

// Output says what an output type needs, and which protocol word names it in restream_type.
type Output struct {
	Word      string
	Schemes   []string
	NeedsHost bool
}

var inputs = map[string]Input{
	InputSRTSoftware:   {Word: "SRT", Server: ServerSRT},
	InputSRTHardware:   {Word: "SRT", Server: ServerSRT, Hardware: true},
	InputRTMPSoftware:  {Word: "RTMP", Server: ServerRTMP},
	InputRTMPHardware:  {Word: "RTMP", Server: ServerRTMP, Hardware: true},
	InputSRTListen:     {Word: "SRT", Listen: UDP, Schemes: []string{"srt"}},
	InputUDPListen:     {Word: "UDP", Listen: UDP, Schemes: []string{"udp"}},
	InputRTMPListen:    {Word: "RTMP", Listen: TCP, Schemes: []string{"rtmp", "rtmps"}},
	InputRTSPListen:    {Word: "RTSP", Listen: TCP, Schemes: []string{"rtsp", "rtsps"}},
	InputHTTPListen:    {Word: "HTTP", Listen: TCP, Schemes: []string{"http", "https"}},
	InputSRTURL:        {Word: "SRT", Schemes: []string{"srt"}},
	InputRTMPURL:       {Word: "RTMP", Schemes: []string{"rtmp", "rtmps"}, NeedsHost: true},
	InputRTSPURL:       {Word: "RTSP", Schemes: []string{"rtsp", "rtsps"}, NeedsHost: true},
	InputUDPURL:        {Word: "UDP", Schemes: []string{"udp"}},
	InputHTTPURL:       {Word: "HTTP", Schemes: []string{"http", "https"}, NeedsHost: true},
	InputHLSURL:        {Word: "HLS", Schemes: []string{"http", "https"}, NeedsHost: true},
	InputMPEGDASHURL:   {Word: "DASH", Schemes: []string{"http", "https"}, NeedsHost: true},
	InputOther:         {Word: "OTHER"},
	InputGenerateVideo: {Word: "TEST"},
}

// inputTypes are the input types in the spec's order (for messages and the OpenAPI enum).
var inputTypes = []string{
	InputSRTSoftware, InputSRTHardware, InputRTMPSoftware, InputRTMPHardware,
	InputSRTListen, InputRTMPListen, InputRTSPListen, InputUDPListen, InputHTTPListen,
	InputSRTURL, InputRTMPURL, InputRTSPURL, InputUDPURL, InputHTTPURL, InputOther,
	InputHLSURL, InputMPEGDASHURL, InputGenerateVideo,
}

var outputs = map[string]Output{
	OutputLocalRTMPURL: {Word: "RTMP", Schemes: []string{"rtmp", "rtmps"}, NeedsHost: true},
	OutputOtherRTMPURL: {Word: "RTMP", Schemes: []string{"rtmp", "rtmps"}, NeedsHost: true},
	OutputRTSPURL:      {Word: "RTSP", Schemes: []string{"rtsp", "rtsps"}, NeedsHost: true},
	OutputSRTURL:       {Word: "SRT", Schemes: []string{"srt"}},
	OutputUDPURL:       {Word: "UDP", Schemes: []string{"udp"}},
	OutputHTTPURL:      {Word: "HTTP", Schemes: []string{"http", "https"}, NeedsHost: true},
	OutputRTPURL:       {Word: "RTP", Schemes: []string{"rtp"}},
}

// outputTypes are the output types in the spec's order.
var outputTypes = []string{
	OutputLocalRTMPURL, OutputOtherRTMPURL, OutputRTSPURL, OutputSRTURL, OutputUDPURL, OutputHTTPURL, OutputRTPURL,
}

// InputOf returns what input type typ needs; ok is false for an unknown type.
func InputOf(typ string) (in Input, ok bool) {
	in, ok = inputs[typ]
	return in, ok
}

// OutputOf returns what output type typ needs; ok is false for an unknown type.
func OutputOf(typ string) (out Output, ok bool) {
	out, ok = outputs[typ]
	return out, ok
}

// InputTypes returns the input types in the spec's order.
func InputTypes() []string { return slices.Clone(inputTypes) }

// OutputTypes returns the output types in the spec's order.
func OutputTypes() []string { return slices.Clone(outputTypes) }

// RTMPPasswordPattern is the form of an RTMP password: an RTMP server module's publish or play
// password, or the one an RTMP listen input's address sets. 10 to 128 of the characters a URL
// carries unescaped, so that it reads the same in every encoder's stream key field.
const RTMPPasswordPattern = `^[A-Za-z0-9._~-]{10,128}$`

// RTMPPasswordRule says RTMPPasswordPattern in words, for messages.
const RTMPPasswordRule = "10 to 128 of A-Z a-z 0-9 . _ ~ -"

var rtmpPassword = regexp.MustCompile(RTMPPasswordPattern)

// ValidRTMPPassword tells whether s has the form of an RTMP password (RTMPPasswordPattern).
func ValidRTMPPassword(s string) bool { return rtmpPassword.MatchString(s) }

// ListenUserPattern is the form of the user name an RTSP listen input's address sets with its
// password (rtsp://user:password@0.0.0.0:8554/cam): 1 to 64 of the characters of an RTMP
// password.
const ListenUserPattern = `^[A-Za-z0-9._~-]{1,64}$`

// ListenUserRule says ListenUserPattern in words, for messages.
const ListenUserRule = "1 to 64 of A-Z a-z 0-9 . _ ~ -"

var listenUser = regexp.MustCompile(ListenUserPattern)

// ValidListenUser tells whether s has the form of a listen input's user name
// (ListenUserPattern).
func ValidListenUser(s string) bool { return listenUser.MatchString(s) }
