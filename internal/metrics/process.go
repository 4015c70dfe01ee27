package metrics

import "time"

// States are the process states a Process reports, one gauge series each
// (internal/supervisor's states).
var States = []string{"stopped", "starting", "waiting", "running", "reconnecting", "failed"}

// Process is what a process (player, restream, recording, server module) reports at scrape
// time. Module, ID and Name are its labels; the pointers are nil where the process has no such
// part.
type Process struct {
	Module, ID, Name string
	// State is one of States.
	State string
	// Restarts counts the failed attempts its supervisors restarted.
	Restarts int
	// Input is the process's own Stream; nil for server modules and stopped processes.
	Input *Input
	// BytesOut counts the bytes the process sent (SRT outputs, HLS/DASH responses); -1 when
	// it has no measured output.
	BytesOut int64
	// Links are its SRT connections now.
	Links []Link
	// Streams are the streams published to a server module now.
	Streams   []Session
	Player    *Player
	Recording *Recording
	Transcode *Transcode
}

// Input is the figures of a process's input Stream.
type Input struct {
	// Bitrate is the payload bitrate over the last 2 s, kbit/s; FPS the video units per second.
	Bitrate, FPS float64
	// BytesIn counts payload bytes written into the Stream.
	BytesIn int64
	// Readers is the number of readers attached now.
	Readers int
	// Dropped counts units readers dropped for being behind, all readers together.
	Dropped int64
	// Discontinuities counts publisher sessions that followed an earlier one.
	Discontinuities int64
	// Since is when the current publisher attached (zero: none).
	Since time.Time
	// LastMedia is when the last unit arrived, to 100 ms (zero: never).
	LastMedia time.Time
}

// Link is one SRT connection's statistics.
type Link struct {
	// Role is input, output or publisher; Stream the stream id of a server module's publisher.
	Role, Stream string
	// RTT is the smoothed round-trip time; Latency and PeerLatency the negotiated TSBPD
	// latencies of what is received and what is sent.
	RTT, Latency, PeerLatency time.Duration
	// BandwidthKbps is the estimated link capacity, kbit/s.
	BandwidthKbps float64
	// Packet and byte counts since the connection started.
	PacketsSent, PacketsReceived, PacketsLost, PacketsRetransmitted, PacketsDropped uint64
	BytesSent, BytesReceived                                                        uint64
}

// Session is a stream published to a server module (an RTMP or SRT publisher, or an in-process
// restream).
type Session struct {
	Stream  string
	Since   time.Time
	BytesIn int64
	// Bitrate is kbit/s over the last 2 s.
	Bitrate float64
	Readers int
}

// Player is a player's packaging figures.
type Player struct {
	// Segments counts the segments produced; PlaylistRequests the HLS playlist and DASH MPD
	// requests served.
	Segments, PlaylistRequests int64
	// Window and WindowBytes are what the segment window holds now.
	Window      time.Duration
	WindowBytes int64
}

// Recording is a file recording's figures.
type Recording struct {
	// Files counts the files opened; BytesWritten what went into them (the open file's size as
	// last saved, at most 2 s old); WriteErrors the writes that failed; Repairs the files cut
	// back to their last whole fragment (after a write error, or at start after a crash).
	Files, BytesWritten, WriteErrors, Repairs int64
}

// Transcode is the figures of a process's ffmpeg transcoding job.
type Transcode struct {
	// Running tells whether ffmpeg runs now.
	Running bool
	// Speed is media time over wall time and FPS the output frame rate, from ffmpeg's last
	// progress report.
	Speed, FPS float64
	// CPU is the CPU time of the running ffmpeg.
	CPU time.Duration
}
