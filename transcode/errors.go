package transcode

import "errors"

var (
	// ErrNoHardware is returned by Args when a transcoding object asks for a hardware encoder
	// (mpsoc_vcu_*) and the server has none for that codec.
	ErrNoHardware = errors.New("no hardware encoder")

	// ErrInvalid is returned by Args for a value ffmpeg cannot take, found only when mapping
	// (the API validates ranges and enumerations before).
	ErrInvalid = errors.New("invalid transcoding value")

	// ErrInputChanged is returned by Job.Run when the input's tracks are no longer those the
	// arguments were built for (a new publisher with other codecs): the caller builds fresh
	// arguments and starts a new Job.
	ErrInputChanged = errors.New("input tracks changed")

	// ErrStalled is returned by Job.Run when ffmpeg made no progress for StallTimeout while
	// input was flowing; ffmpeg was killed.
	ErrStalled = errors.New("ffmpeg stalled")
)
