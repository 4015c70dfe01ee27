package bench

import "fmt"

// fanTarget is where one restream of a fan-out goes: a receiver in the bench.
type fanTarget struct {
	kind string // recvSRT or recvRTMP
	port int
	key  string // RTMP stream key
}

// srtURL is the SRT address of the receiver, with the bench's latency (ffmpeg: microseconds).
func (t fanTarget) srtURL() string {
	return fmt.Sprintf("srt://127.0.0.1:%d?latency=%d", t.port, srtLatency.Microseconds())
}

// rtmpApp is the RTMP address of the receiver without the stream key.
func (t fanTarget) rtmpApp() string { return fmt.Sprintf("rtmp://127.0.0.1:%d/live", t.port) }

// sluiceOutput is the output of a sluice restream to the receiver.
func (t fanTarget) sluiceOutput() map[string]any {
	if t.kind == recvRTMP {
		return map[string]any{"output_type": "OUTPUT_TYPE_OTHER_RTMP_URL", "output_stream_url": t.rtmpApp(),
			"output_stream_key": t.key}
	}
	return map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL", "output_stream_url": fmt.Sprintf("srt://127.0.0.1:%d", t.port)}
}

// ffmpegOutput are the output arguments of an ffmpeg restream to the receiver.
func (t fanTarget) ffmpegOutput() []string {
	if t.kind == recvRTMP {
		return []string{"-f", "flv", t.rtmpApp() + "/" + t.key}
	}
	return []string{"-f", "mpegts", t.srtURL()}
}

// teeSlave is the receiver as a slave of ffmpeg's tee muxer; FLV needs AAC without ADTS headers.
func (t fanTarget) teeSlave() string {
	if t.kind == recvRTMP {
		return "[f=flv:onfail=ignore:bsfs/a=aac_adtstoasc]" + t.rtmpApp() + "/" + t.key
	}
	return "[f=mpegts:onfail=ignore]" + t.srtURL()
}
