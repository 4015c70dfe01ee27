// Package storage keeps sluice's records: players, restreams, recordings, server modules,
// recorded files, port claims, users and settings. Records are plain structs; the Store
// persists them as JSON documents with indexed unique columns.
package storage

import "time"

// Module names a kind of entity. The values are the module names of the port list (API.md).
type Module string

// The modules of the service.
const (
	ModuleAPI         Module = "MODULE_API"
	ModuleVOD         Module = "MODULE_VOD"
	ModuleRestream    Module = "MODULE_RESTREAM"
	ModuleRecording   Module = "MODULE_RECORDING"
	ModuleSRTServers  Module = "MODULE_SRT_SERVERS"
	ModuleRTMPServers Module = "MODULE_RTMP_SERVERS"
	ModuleWebhooks    Module = "MODULE_WEBHOOKS"
)

// Transports of a port claim.
const (
	TCP = "TCP"
	UDP = "UDP"
)

// Base holds the fields every stored entity has.
type Base struct {
	ID       string    `json:"id"`
	Active   bool      `json:"active"`
	UserID   string    `json:"user_id,omitempty"`
	Created  time.Time `json:"created"`
	Modified time.Time `json:"modified"`
}

// Meta returns the common fields; it makes every record embedding Base satisfy part of Record.
func (b *Base) Meta() *Base { return b }

// Record is an entity kept by the Store: a player, restream, recording or server module.
type Record interface {
	Meta() *Base
	Module() Module
	// UniqueName is the name that must be unique within the module.
	UniqueName() string
	// PortKeys are the ports the record claims while it exists (running or not).
	PortKeys() []PortKey
}

// PortKey is a port and its transport (TCP or UDP).
type PortKey struct {
	Port      int    `json:"port"`
	Transport string `json:"transport"`
}

// ListenPort is the input_stream_listen_port object of a listen input.
type ListenPort struct {
	Port      int    `json:"port"`
	Transport string `json:"transport"`
}

// Input is the input object shared by players, restreams and recordings (spec 2.1).
type Input struct {
	// ID is set on restream inputs, which the API returns as an array of inputs.
	ID                    string      `json:"id,omitempty"`
	InputType             string      `json:"input_type"`
	InputServerID         string      `json:"input_server_id,omitempty"`
	InputStreamID         string      `json:"input_stream_id,omitempty"`
	InputStreamListenPort *ListenPort `json:"input_stream_listen_port,omitempty"`
	InputStreamURL        string      `json:"input_stream_url,omitempty"`
	ModuleName            string      `json:"module_name,omitempty"`
	ModuleType            string      `json:"module_type,omitempty"`

	// Generated test stream; filled with the spec's defaults for INPUT_TYPE_GENERATE_TEST_VIDEO.
	EncodingRate     int `json:"encoding_rate,omitempty"`      // frames per second, default 24
	SoundHz          int `json:"sound_hz,omitempty"`           // sine tone, Hz, default 216
	ResolutionWidth  int `json:"resolution_width,omitempty"`   // pixels, default 1920
	ResolutionHeight int `json:"resolution_height,omitempty"`  // pixels, default 1080
	VideoDurationSec int `json:"video_duration_sec,omitempty"` // seconds, default 3600
	TestVideoBitrate int `json:"test_video_bitrate,omitempty"` // kbit/s, default 6000
}

// ListenKey returns the port the input listens on, if it is a listen input.
func (in *Input) ListenKey() (PortKey, bool) {
	if in == nil || in.InputStreamListenPort == nil {
		return PortKey{}, false
	}
	return PortKey{Port: in.InputStreamListenPort.Port, Transport: in.InputStreamListenPort.Transport}, true
}

// Transcoding is the transcoding object (spec 2.2). Nil or all-empty means passthrough.
type Transcoding struct {
	VideoTranscoding   string   `json:"video_transcoding,omitempty"`
	OutputVideoBitrate *int     `json:"output_video_bitrate,omitempty"` // kbit/s
	ForceKeyFrames     any      `json:"force_key_frames,omitempty"`     // seconds (number) or an ffmpeg expression (string)
	GOP                *int     `json:"gop,omitempty"`                  // frames
	FrameWidth         *int     `json:"frame_width,omitempty"`          // pixels
	FrameHeight        *int     `json:"frame_height,omitempty"`         // pixels
	Preset             string   `json:"preset,omitempty"`
	Tune               string   `json:"tune,omitempty"`
	CRF                *int     `json:"crf,omitempty"`
	PixFmt             string   `json:"pix_fmt,omitempty"`
	FilterFPS          *float64 `json:"filter_fps,omitempty"` // frames per second
	AudioTranscoding   string   `json:"audio_trancoding,omitempty"`
	OutputAudioBitrate *int     `json:"output_audio_bitrate,omitempty"` // kbit/s
	SampleRate         *int     `json:"sample_rate,omitempty"`          // Hz
	Slices             *int     `json:"slices,omitempty"`
	Cores              *int     `json:"cores,omitempty"`
}

// Output is the output object of a restream (spec 2.3).
type Output struct {
	ID              string `json:"id,omitempty"`
	OutputType      string `json:"output_type"`
	OutputStreamURL string `json:"output_stream_url,omitempty"`
	OutputStreamKey string `json:"output_stream_key,omitempty"`
}

// Player is a VoD/OTT player record (spec 2.4).
type Player struct {
	Base
	VodName                 string       `json:"vod_name"`
	Input                   Input        `json:"input"`
	VodPort                 int          `json:"vod_port"`
	InitialLiveManifestSize int          `json:"initial_live_manifest_size"`
	LiveSyncDurationCount   int          `json:"live_sync_duration_count"`
	HLSFragmentSize         float64      `json:"hls_fragment_size"`   // seconds
	HLSFragmentLength       float64      `json:"hls_fragment_length"` // seconds
	DASHFragmentSize        float64      `json:"dash_fragment_size"`  // seconds
	DASHFragmentLength      float64      `json:"dash_fragment_length"`
	Transcoding             *Transcoding `json:"transcoding,omitempty"`
	// LowLatency opts the player into Low-Latency HLS (issue 16). Omitted when false, so a
	// classic player's record is unchanged.
	LowLatency bool `json:"low_latency,omitempty"`
	// PartDurationMS is the LL-HLS part duration in milliseconds (100..1000, below
	// hls_fragment_size). 333 when low_latency is set without it; 0 (omitted) for a classic
	// player that did not give it.
	PartDurationMS int `json:"part_duration_ms,omitempty"`
}

// DefaultPartDurationMS is part_duration_ms when a low-latency player does not give it.
const DefaultPartDurationMS = 333

// Module implements Record.
func (*Player) Module() Module { return ModuleVOD }

// UniqueName implements Record.
func (p *Player) UniqueName() string { return p.VodName }

// PortKeys implements Record: the vod_port (TCP) and the input's listen port.
func (p *Player) PortKeys() []PortKey {
	keys := []PortKey{{Port: p.VodPort, Transport: TCP}}
	if k, ok := p.Input.ListenKey(); ok {
		keys = append(keys, k)
	}
	return keys
}

// Restream is a restreaming process record (spec 2.5).
type Restream struct {
	Base
	RestreamName string       `json:"restream_name"`
	RestreamType string       `json:"restream_type"`
	Input        Input        `json:"input"`
	Output       Output       `json:"output"`
	Transcoding  *Transcoding `json:"transcoding,omitempty"`
}

// Module implements Record.
func (*Restream) Module() Module { return ModuleRestream }

// UniqueName implements Record.
func (r *Restream) UniqueName() string { return r.RestreamName }

// PortKeys implements Record: the input's listen port.
func (r *Restream) PortKeys() []PortKey {
	if k, ok := r.Input.ListenKey(); ok {
		return []PortKey{k}
	}
	return nil
}

// Recording is a recording task record (spec 2.6). Its recordedFiles are kept as RecordedFile rows.
type Recording struct {
	Base
	RecordingName     string       `json:"recording_name"`
	RecordingType     string       `json:"recording_type"`
	Input             Input        `json:"input"`
	OutputFormat      string       `json:"output_format"`
	MemoryDurationSec int          `json:"memory_duration_sec,omitempty"` // seconds, default 300 for memory recordings
	Transcoding       *Transcoding `json:"transcoding,omitempty"`
}

// Module implements Record.
func (*Recording) Module() Module { return ModuleRecording }

// UniqueName implements Record.
func (r *Recording) UniqueName() string { return r.RecordingName }

// PortKeys implements Record: the input's listen port.
func (r *Recording) PortKeys() []PortKey {
	if k, ok := r.Input.ListenKey(); ok {
		return []PortKey{k}
	}
	return nil
}

// SRTServer is an SRT server module (API.md).
type SRTServer struct {
	Base
	ServerName       string `json:"server_name"`
	ServerPort       int    `json:"server_port"`                 // UDP
	ServerLatency    int    `json:"server_latency"`              // ms, default 200
	ServerPassphrase string `json:"server_passphrase,omitempty"` // never returned by the API
	ServerPbkeylen   int    `json:"server_pbkeylen,omitempty"`   // 16, 24 or 32
	ServerMaxbw      int64  `json:"server_maxbw"`                // bytes/s, -1 unlimited
	ServerTimeout    int    `json:"server_timeout,omitempty"`    // seconds
	PublisherPrefix  string `json:"publisher_prefix"`            // default "publisher"
	ReceiverPrefix   string `json:"receiver_prefix"`             // default "receiver"
}

// Module implements Record.
func (*SRTServer) Module() Module { return ModuleSRTServers }

// UniqueName implements Record.
func (s *SRTServer) UniqueName() string { return s.ServerName }

// PortKeys implements Record.
func (s *SRTServer) PortKeys() []PortKey { return []PortKey{{Port: s.ServerPort, Transport: UDP}} }

// RTMPServer is an RTMP server module (API.md). The passwords are beyond the spec: empty means
// anyone may publish or play over the network.
type RTMPServer struct {
	Base
	ServerName            string `json:"server_name"`
	ServerPort            int    `json:"server_port"`                       // TCP
	ServerPublishPassword string `json:"server_publish_password,omitempty"` // never returned by the API
	ServerPlayPassword    string `json:"server_play_password,omitempty"`    // never returned by the API
}

// Module implements Record.
func (*RTMPServer) Module() Module { return ModuleRTMPServers }

// UniqueName implements Record.
func (s *RTMPServer) UniqueName() string { return s.ServerName }

// PortKeys implements Record.
func (s *RTMPServer) PortKeys() []PortKey { return []PortKey{{Port: s.ServerPort, Transport: TCP}} }

// States of a recorded file.
const (
	FileRecording = "recording"
	FileComplete  = "complete"
	FileRepaired  = "repaired"
)

// RecordedFile is one file written by a recording (API.md "Recording files").
type RecordedFile struct {
	ID       string     `json:"id"`
	RecordID string     `json:"record_id"`
	Name     string     `json:"name"`
	Path     string     `json:"path"` // relative to the recordings folder
	Format   string     `json:"format"`
	Size     int64      `json:"size"`     // bytes
	Duration float64    `json:"duration"` // seconds
	Created  time.Time  `json:"created"`
	Ended    *time.Time `json:"ended"`
	State    string     `json:"state"`
	// Node is the cluster node whose disk holds the file (issue 17): AddFile sets it to the
	// store's node (SetNode); empty on a single node. Kept in its own column, not the document,
	// and never changed by UpdateFile.
	Node string `json:"-"`
}

// PortClaim is a port held by an entity of the service.
type PortClaim struct {
	ID         string    `json:"id"`
	Port       int       `json:"port"`
	Transport  string    `json:"transport"`
	Module     Module    `json:"module_name"`
	EntityID   string    `json:"entity_id"`
	EntityName string    `json:"entity_name"`
	Created    time.Time `json:"created"`
}

// Key returns the claim's port and transport.
func (c PortClaim) Key() PortKey { return PortKey{Port: c.Port, Transport: c.Transport} }

// User is an account that may log in.
type User struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	PasswordHash string    `json:"-"`
	Created      time.Time `json:"created"`
}

// Compile-time checks that every record kind satisfies Record.
var (
	_ Record = (*Player)(nil)
	_ Record = (*Restream)(nil)
	_ Record = (*Recording)(nil)
	_ Record = (*SRTServer)(nil)
	_ Record = (*RTMPServer)(nil)
	_ Record = (*Webhook)(nil)
)
