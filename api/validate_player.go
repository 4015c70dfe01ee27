package api

import "github.com/sluicemedia/sluice/storage"

// validatePlayer reads a player (VoD/OTT) record (spec 2.4).
func validatePlayer(f *fields) *storage.Player {
	var p storage.Player
	p.Active = f.boolean("active", true)
	p.VodName = f.name("vod_name")
	if in := f.object("input", true, true); in != nil {
		p.Input = validateInput(in)
	}
	p.VodPort, _ = f.intIn("vod_port", true, 1, 65535)
	p.InitialLiveManifestSize, _ = f.intIn("initial_live_manifest_size", true, 1, 100)
	p.LiveSyncDurationCount, _ = f.intIn("live_sync_duration_count", true, 1, 100)
	var hasHLS, hasDASH bool
	p.HLSFragmentSize, hasHLS = f.number("hls_fragment_size", true, 0.5, 60, false)
	p.HLSFragmentLength = fragmentLength(f, "hls_fragment_length", p.HLSFragmentSize, hasHLS)
	p.DASHFragmentSize, hasDASH = f.number("dash_fragment_size", true, 0.5, 60, false)
	p.DASHFragmentLength = fragmentLength(f, "dash_fragment_length", p.DASHFragmentSize, hasDASH)
	p.LowLatency = f.boolean("low_latency", false)
	p.PartDurationMS = partDuration(f, p.LowLatency, p.HLSFragmentSize, hasHLS)
	if t := f.object("transcoding", false, false); t != nil {
		p.Transcoding = validateTranscoding(t)
	}
	if k, ok := p.Input.ListenKey(); ok && k.Port == p.VodPort && k.Transport == storage.TCP {
		f.fail("input.input_stream_listen_port.port", "must differ from vod_port")
	}
	f.done()
	return &p
}

// fragmentLength is a playlist length in seconds, 1..86400 and not below its fragment size.
func fragmentLength(f *fields, key string, size float64, hasSize bool) float64 {
	n, ok := f.number(key, true, 1, 86400, false)
	if ok && hasSize && n < size {
		f.fail(key, "must be at least the fragment size (%s s)", fmtNum(size))
	}
	return n
}

// partDuration is part_duration_ms: an integer from 100 to 1000 ms, below the HLS fragment
// size (a part is a piece of a segment). When absent it is the default for a
// low-latency player and 0 (not stored) for a classic one.
func partDuration(f *fields, lowLatency bool, fragSize float64, hasSize bool) int {
	n, ok := f.intIn("part_duration_ms", false, 100, 1000)
	if !ok {
		if lowLatency {
			n = storage.DefaultPartDurationMS
		} else {
			return 0
		}
	}
	if hasSize && float64(n) >= fragSize*1000 {
		f.fail("part_duration_ms", "must be below the HLS fragment size (%s ms)", fmtNum(fragSize*1000))
	}
	return n
}
