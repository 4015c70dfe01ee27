package transcode

// Passthrough tells whether tc asks for no change at all, so that no ffmpeg is needed: tc is
// nil, or every field is empty, "Disabled" or "Disable". Slices and cores alone change
// nothing: they only tune a hardware encoder.
func Passthrough(tc *Settings) bool {
	if tc == nil {
		return true
	}
	return !wantsVideo(tc) && !wantsAudio(tc)
}

// set tells whether an enumerated field has a value.
func set(s string) bool { return s != "" && s != "Disabled" && s != "Disable" }

// wantsVideo tells whether any field asks for the video to be encoded.
func wantsVideo(tc *Settings) bool {
	return set(tc.VideoTranscoding) || tc.OutputVideoBitrate != nil || keyFramesSet(tc.ForceKeyFrames) ||
		tc.GOP != nil || tc.FrameWidth != nil || tc.FrameHeight != nil || set(tc.Preset) ||
		set(tc.Tune) || tc.CRF != nil || set(tc.PixFmt) || tc.FilterFPS != nil
}

// wantsAudio tells whether any field asks for the audio to be encoded.
func wantsAudio(tc *Settings) bool {
	return set(tc.AudioTranscoding) || tc.OutputAudioBitrate != nil || tc.SampleRate != nil
}
