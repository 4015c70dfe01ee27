package app

import (
	"fmt"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/flv"
	"github.com/sluicemedia/sluice/packager/record"
	"github.com/sluicemedia/sluice/storage"
)

// carries tells whether an output type or a recording format can carry a codec as it is: RTMP
// is FLV (flv.Carries); recording formats say it themselves (record.Carries); RTSP and the
// MPEG-TS outputs carry every codec the bus knows.
func carries(output string, c media.Codec) bool {
	switch output {
	case kinds.OutputLocalRTMPURL, kinds.OutputOtherRTMPURL:
		return flv.Carries(c)
	case record.FormatMP4, record.FormatMOV, record.FormatFLV, record.FormatAVI:
		return record.Carries(output, c)
	}
	return true
}

// checkRestream refuses, at create and update, a restream whose output cannot carry a codec of
// its input, unless its transcoding re-encodes that kind. The input's codecs are known when it
// reads a server module's stream that is publishing; other inputs show the problem as the
// output's last_error once media flows.
func checkRestream(in *inputs, r *storage.Restream) error {
	return checkCarried(in, r.Input, r.Transcoding, r.Output.OutputType)
}

// checkRecording is checkRestream for a recording's output_format.
func checkRecording(in *inputs, r *storage.Recording) error {
	if r.RecordingType == api.RecordingToMemory {
		return nil // memory is MP4
	}
	return checkCarried(in, r.Input, r.Transcoding, r.OutputFormat)
}

// checkCarried refuses an output (type or recording format) that cannot carry a known codec of
// the input, unless the transcoding re-encodes that kind.
func checkCarried(in *inputs, input storage.Input, tc *storage.Transcoding, output string) error {
	for _, t := range in.knownTracks(input) {
		if carries(output, t.Codec) {
			continue
		}
		if tc != nil {
			if t.Codec.IsVideo() && tc.VideoTranscoding != "" || !t.Codec.IsVideo() && tc.AudioTranscoding != "" {
				continue
			}
		}
		fix := "audio_trancoding (aac or mp3)"
		if t.Codec.IsVideo() {
			fix = "video_transcoding"
		}
		return fmt.Errorf("%w: the input carries %s, which %s cannot carry; add a transcoding object with %s",
			api.ErrUnsupported, t.Codec, output, fix)
	}
	return nil
}

// knownTracks returns the tracks of a server module stream that is publishing now, else nil.
func (in *inputs) knownTracks(input storage.Input) []media.Track {
	kind, _ := kinds.InputOf(input.InputType)
	if kind.Server == "" {
		return nil
	}
	name, err := in.moduleStreamName(input, kind)
	if err != nil {
		return nil
	}
	s, ok := in.hub.registry(input.InputServerID).Get(name)
	if !ok || !s.Publishing() {
		return nil
	}
	return s.Tracks()
}
