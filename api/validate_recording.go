package api

import "github.com/sluicemedia/sluice/storage"

// Recording types and formats (spec 2.6).
const (
	RecordingToFile   = "RECORDING_STREAM_TO_FILE"
	RecordingToMemory = "RECORDING_STREAM_TO_MEMORY"
)

var outputFormats = []string{"mp4", "mov", "avi", "flv"}

// validateRecording reads a recording task record (spec 2.6, API.md "Recording files").
func validateRecording(f *fields) *storage.Recording {
	var r storage.Recording
	r.Active = f.boolean("active", true)
	r.RecordingName = f.name("recording_name")
	r.RecordingType, _ = f.enum("recording_type", true, RecordingToFile, RecordingToMemory)
	if in := f.object("input", true, true); in != nil {
		r.Input = validateInput(in)
	}
	r.OutputFormat, _ = f.enum("output_format", true, outputFormats...)
	if d, ok := f.intIn("memory_duration_sec", false, 1, 3600); ok && r.RecordingType == RecordingToMemory {
		r.MemoryDurationSec = d
	} else if r.RecordingType == RecordingToMemory {
		r.MemoryDurationSec = 300
	}
	if t := f.object("transcoding", false, false); t != nil {
		r.Transcoding = validateTranscoding(t)
	}
	f.used["recordedFiles"] = true
	f.done()
	return &r
}
