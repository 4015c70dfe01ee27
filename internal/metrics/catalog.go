package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metric describes one metric family sluice exports (docs/metrics.md lists them all; a test
// holds the two together).
type Metric struct {
	Name, Type, Help string
	Labels           []string
}

// Label sets.
var (
	procLabels    = []string{"module", "id", "name"}
	stateLabels   = []string{"module", "id", "name", "state"}
	linkLabels    = []string{"module", "id", "name", "role", "stream"}
	sessionLabels = []string{"module", "id", "name", "stream"}
	routeLabels   = []string{"route", "code"}
)

// desc is a metric the collector makes at scrape time.
type desc struct {
	Metric
	vt prometheus.ValueType
	d  *prometheus.Desc
}

func newDesc(name, help string, vt prometheus.ValueType, labels []string) *desc {
	kind := "gauge"
	if vt == prometheus.CounterValue {
		kind = "counter"
	}
	return &desc{Metric: Metric{Name: name, Type: kind, Help: help, Labels: labels}, vt: vt,
		d: prometheus.NewDesc(name, help, labels, nil)}
}

const (
	gauge   = prometheus.GaugeValue
	counter = prometheus.CounterValue
)

// The families the collector reads from the processes at scrape time.
var (
	mState        = newDesc("sluice_process_state", "1 for the state the process is in, 0 for the others.", gauge, stateLabels)
	mRestarts     = newDesc("sluice_process_restarts_total", "Failed attempts of the process's parts that were restarted.", counter, procLabels)
	mBitrate      = newDesc("sluice_process_input_bytes_per_second", "Payload rate of the process's input over the last 2 s (the bitrate / 8).", gauge, procLabels)
	mFPS          = newDesc("sluice_process_input_frames_per_second", "Video frames per second of the process's input over the last 2 s.", gauge, procLabels)
	mBytesIn      = newDesc("sluice_process_input_bytes_total", "Payload bytes the process's input received.", counter, procLabels)
	mBytesOut     = newDesc("sluice_process_output_bytes_total", "Bytes the process sent: SRT outputs, HLS and DASH responses of players.", counter, procLabels)
	mReaders      = newDesc("sluice_process_readers", "Readers attached to the process's stream (packagers, outputs, recorders, transcoders).", gauge, procLabels)
	mDropped      = newDesc("sluice_process_dropped_units_total", "Access units readers of the process's stream dropped for being behind.", counter, procLabels)
	mDiscont      = newDesc("sluice_process_input_discontinuities_total", "Publisher sessions of the process's input that followed an earlier one.", counter, procLabels)
	mSinceMedia   = newDesc("sluice_process_seconds_since_media", "Seconds since the process's input last delivered media (absent before the first).", gauge, procLabels)
	mUptime       = newDesc("sluice_process_input_session_seconds", "Seconds the current publisher or pull of the process's input has been attached (absent when none).", gauge, procLabels)
	mSRTRTT       = newDesc("sluice_srt_rtt_seconds", "Smoothed round-trip time of an SRT connection.", gauge, linkLabels)
	mSRTLatency   = newDesc("sluice_srt_latency_seconds", "Negotiated TSBPD latency of what an SRT connection receives.", gauge, linkLabels)
	mSRTPeerLat   = newDesc("sluice_srt_peer_latency_seconds", "Negotiated TSBPD latency of what an SRT connection sends.", gauge, linkLabels)
	mSRTBandwidth = newDesc("sluice_srt_bandwidth_bytes_per_second", "Estimated link capacity of an SRT connection.", gauge, linkLabels)
	mSRTSent      = newDesc("sluice_srt_packets_sent_total", "Data packets an SRT connection sent, retransmissions included.", counter, linkLabels)
	mSRTRecv      = newDesc("sluice_srt_packets_received_total", "Data packets an SRT connection received, retransmissions included.", counter, linkLabels)
	mSRTLost      = newDesc("sluice_srt_packets_lost_total", "Data packets an SRT connection found lost on receipt.", counter, linkLabels)
	mSRTRetrans   = newDesc("sluice_srt_packets_retransmitted_total", "Data packets an SRT connection retransmitted or received retransmitted.", counter, linkLabels)
	mSRTDropped   = newDesc("sluice_srt_packets_dropped_total", "Data packets an SRT connection dropped as too late or for lack of room.", counter, linkLabels)
	mSRTBytesSent = newDesc("sluice_srt_bytes_sent_total", "Payload bytes an SRT connection sent.", counter, linkLabels)
	mSRTBytesRecv = newDesc("sluice_srt_bytes_received_total", "Payload bytes an SRT connection received.", counter, linkLabels)
	mSessBytes    = newDesc("sluice_server_stream_bytes_total", "Payload bytes of a stream published to an SRT or RTMP server module.", counter, sessionLabels)
	mSessSeconds  = newDesc("sluice_server_stream_seconds", "Seconds a stream has been published to an SRT or RTMP server module.", gauge, sessionLabels)
	mSessBitrate  = newDesc("sluice_server_stream_bytes_per_second", "Payload rate over the last 2 s of a stream published to a server module (the bitrate / 8).", gauge, sessionLabels)
	mSessReaders  = newDesc("sluice_server_stream_readers", "Readers of a stream published to a server module.", gauge, sessionLabels)
	mPlSegments   = newDesc("sluice_player_segments_total", "Media segments a player produced.", counter, procLabels)
	mPlPlaylists  = newDesc("sluice_player_playlist_requests_total", "HLS playlist and DASH MPD requests a player served.", counter, procLabels)
	mPlWindow     = newDesc("sluice_player_window_seconds", "Media duration a player's segment window holds now.", gauge, procLabels)
	mPlWindowB    = newDesc("sluice_player_window_bytes", "Bytes a player's segment window holds now.", gauge, procLabels)
	mRecFiles     = newDesc("sluice_recording_files_total", "Files a recording opened.", counter, procLabels)
	mRecBytes     = newDesc("sluice_recording_bytes_written_total", "Bytes a recording wrote (the open file as last saved, at most 2 s old).", counter, procLabels)
	mRecErrors    = newDesc("sluice_recording_write_errors_total", "Writes of a recording that failed.", counter, procLabels)
	mRecRepairs   = newDesc("sluice_recording_repairs_total", "Files of a recording cut back to their last whole fragment (write error, or crash repair at start).", counter, procLabels)
	mTcRunning    = newDesc("sluice_transcode_running", "1 while a process's ffmpeg transcoder runs.", gauge, procLabels)
	mTcSpeed      = newDesc("sluice_transcode_speed_ratio", "Media time over wall time of a process's ffmpeg transcoder (1 is real time), from its progress.", gauge, procLabels)
	mTcFPS        = newDesc("sluice_transcode_frames_per_second", "Output frame rate of a process's ffmpeg transcoder, from its progress.", gauge, procLabels)
	mTcCPU        = newDesc("sluice_transcode_cpu_seconds_total", "CPU time of a process's running ffmpeg transcoder.", counter, procLabels)
	mChildren     = newDesc("sluice_child_processes", "Child processes of the server running now (ffmpeg: transcoders, test streams, remuxers).", gauge, nil)
	mChildrenCPU  = newDesc("sluice_child_processes_cpu_seconds", "CPU time of the child processes running now, together (falls when one exits).", gauge, nil)
)

// collected lists the families of the process collector, in the catalog's order.
var collected = []*desc{
	mState, mRestarts, mBitrate, mFPS, mBytesIn, mBytesOut, mReaders, mDropped, mDiscont, mSinceMedia, mUptime,
	mSRTRTT, mSRTLatency, mSRTPeerLat, mSRTBandwidth, mSRTSent, mSRTRecv, mSRTLost, mSRTRetrans, mSRTDropped,
	mSRTBytesSent, mSRTBytesRecv,
	mSessBytes, mSessSeconds, mSessBitrate, mSessReaders,
	mPlSegments, mPlPlaylists, mPlWindow, mPlWindowB,
	mRecFiles, mRecBytes, mRecErrors, mRecRepairs,
	mTcRunning, mTcSpeed, mTcFPS, mTcCPU,
	mChildren, mChildrenCPU,
}

// The API's own families (updated per request, not on the media path).
var (
	apiRequests = Metric{Name: "sluice_api_requests_total", Type: "counter",
		Help: "API and playback requests on the main port, by route pattern and status code.", Labels: routeLabels}
	apiDuration = Metric{Name: "sluice_api_request_duration_seconds", Type: "histogram",
		Help: "Time to answer an API or playback request on the main port, by route pattern.", Labels: []string{"route"}}
	loginFailures = Metric{Name: "sluice_api_login_failures_total", Type: "counter",
		Help: "Logins refused for a wrong user name or password.", Labels: nil}
)

// Catalog lists every metric family sluice exports besides the Go runtime's (go_*) and the
// process's (process_*).
func Catalog() []Metric {
	out := make([]Metric, 0, len(collected)+3)
	for _, d := range collected {
		out = append(out, d.Metric)
	}
	return append(out, apiRequests, apiDuration, loginFailures)
}
