package transcode

// Settings is what a transcoding job is asked to do: the transcoding object of a restream or
// player (spec 2.2) in plain values, as the wiring hands it over (transcode does not read
// records). Nil pointers and empty strings are unset; nil or all-unset Settings is passthrough.
type Settings struct {
	VideoTranscoding   string   // video encoder: libx264, libx265, mpsoc_vcu_h264, mpsoc_vcu_hevc; "" or Disabled: the input's codec
	OutputVideoBitrate *int     // kbit/s
	ForceKeyFrames     any      // seconds (number) or an ffmpeg expression (string)
	GOP                *int     // frames
	FrameWidth         *int     // pixels
	FrameHeight        *int     // pixels
	Preset             string   // x264/x265 preset
	Tune               string   // x264/x265 tune
	CRF                *int     // constant rate factor
	PixFmt             string   // ffmpeg pixel format
	FilterFPS          *float64 // frames per second
	AudioTranscoding   string   // audio codec: aac, mp3; "" or Disabled: the input's codec
	OutputAudioBitrate *int     // kbit/s
	SampleRate         *int     // Hz
	Slices             *int     // encoder slices
	Cores              *int     // encoder threads
}
