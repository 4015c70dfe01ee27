package api

import (
	"context"
	"errors"
	"testing"
)

// transcodingCases are shared with the fuzz seeds: bodies and the field refused ("" = valid).
var transcodingCases = []struct {
	body  string
	field string
}{
	{`{}`, ""},
	{`{"video_transcoding":"libx265","output_video_bitrate":"8000","force_key_frames":2,"gop":"50","frame_width":1920,"frame_height":1080,
	   "preset":"veryslow","tune":"zerolatency","crf":0,"pix_fmt":"Disable","filter_fps":29.97,"audio_trancoding":"aac",
	   "output_audio_bitrate":320,"sample_rate":"44100","slices":68,"cores":4}`, ""},
	{`{"video_transcoding":"","audio_trancoding":"","preset":"","tune":"Disabled","pix_fmt":"yuv420p10le"}`, ""},
	{`{"video_transcoding":"Disabled","audio_transcoding":"Disabled"}`, ""},
	{`{"force_key_frames":"expr:gte(t,n_forced*2)"}`, ""},
	{`{"force_key_frames":"2.5"}`, ""},
	{`{"force_key_frames":60}`, ""},
	{`{"force_key_frames":"0,2,4.5,1:00"}`, ""},
	{`{"force_key_frames":"source"}`, ""},
	{`{"frame_width":1280}`, ""},
	{`{"frame_width":0,"frame_height":720}`, ""},
	{`{"output_video_bitrate":null,"crf":""}`, ""},
	{`{"video_transcoding":"h264"}`, "transcoding.video_transcoding"},
	{`{"video_transcoding":5}`, "transcoding.video_transcoding"},
	{`{"output_video_bitrate":0}`, "transcoding.output_video_bitrate"},
	{`{"output_video_bitrate":200001}`, "transcoding.output_video_bitrate"},
	{`{"output_video_bitrate":4000.5}`, "transcoding.output_video_bitrate"},
	{`{"force_key_frames":0}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":61}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"expr:gte(t, n_forced*2)"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"1;rm -rf /"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"-y"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":true}`, "transcoding.force_key_frames"},
	// Strings that pass the safe alphabet but that ffmpeg refuses when it starts.
	{`{"force_key_frames":"abc"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"expr:foo"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"expr:gte(t,n_forced*2"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"expr:gte(t)"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"0,,2"}`, "transcoding.force_key_frames"},
	{`{"gop":0}`, "transcoding.gop"},
	{`{"gop":1001}`, "transcoding.gop"},
	{`{"gop":"2e1"}`, ""},
	{`{"gop":"4.5"}`, "transcoding.gop"},
	{`{"frame_width":7681}`, "transcoding.frame_width"},
	{`{"frame_height":4321}`, "transcoding.frame_height"},
	{`{"frame_width":0,"frame_height":0}`, "transcoding.frame_width"},
	{`{"frame_width":1281,"frame_height":720}`, "transcoding.frame_width"},
	{`{"frame_width":1280,"frame_height":721}`, "transcoding.frame_height"},
	{`{"preset":"veryfast"}`, "transcoding.preset"},
	{`{"tune":"music"}`, "transcoding.tune"},
	{`{"crf":-1}`, "transcoding.crf"},
	{`{"crf":52}`, "transcoding.crf"},
	{`{"pix_fmt":"rgb24"}`, "transcoding.pix_fmt"},
	{`{"filter_fps":0}`, "transcoding.filter_fps"},
	{`{"filter_fps":240.1}`, "transcoding.filter_fps"},
	{`{"audio_trancoding":"opus"}`, "transcoding.audio_trancoding"},
	{`{"audio_transcoding":"flac"}`, "transcoding.audio_trancoding"},
	{`{"output_audio_bitrate":7}`, "transcoding.output_audio_bitrate"},
	{`{"output_audio_bitrate":1025}`, "transcoding.output_audio_bitrate"},
	{`{"sample_rate":44000}`, "transcoding.sample_rate"},
	// mp3's own limits: layer III rates the server reads, at most 320 kbit/s.
	{`{"audio_trancoding":"aac","sample_rate":8000,"output_audio_bitrate":1024}`, ""},
	{`{"audio_trancoding":"mp3","sample_rate":16000,"output_audio_bitrate":320}`, ""},
	{`{"audio_trancoding":"mp3","sample_rate":8000}`, "transcoding.sample_rate"},
	{`{"audio_transcoding":"mp3","sample_rate":96000}`, "transcoding.sample_rate"},
	{`{"audio_trancoding":"mp3","output_audio_bitrate":384}`, "transcoding.output_audio_bitrate"},
	{`{"slices":69}`, "transcoding.slices"},
	{`{"cores":5}`, "transcoding.cores"},
	{`{"cores":"1e400"}`, "transcoding.cores"},
	{`{"cores":"99999999999999999999"}`, "transcoding.cores"},
	{`{"cores":"Infinity"}`, "transcoding.cores"},
	// Non-finite numbers, and the spellings ffmpeg reads as numbers, are refused with the field.
	{`{"force_key_frames":"inf"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"NaN"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":" +Infinity "}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"-inf"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"1e999"}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":1e999}`, "transcoding.force_key_frames"},
	{`{"force_key_frames":"0x1p4"}`, "transcoding.force_key_frames"},
	{`{"filter_fps":"NaN"}`, "transcoding.filter_fps"},
	{`{"filter_fps":1e999}`, "transcoding.filter_fps"},
	{`{"filter_fps":"-1e999"}`, "transcoding.filter_fps"},
	{`{"gop":1e999}`, "transcoding.gop"},
	{`{"output_audio_bitrate":"inf"}`, "transcoding.output_audio_bitrate"},
}

// validateRoot runs validate on body as the object at path "transcoding".
func runTranscoding(t *testing.T, body string) (*fields, error) {
	t.Helper()
	m, err := decodeObject([]byte(body))
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	root := newFields(context.Background(), newFakeStore(), map[string]any{})
	f := root.child("transcoding", m)
	validateTranscoding(f)
	return f, f.err()
}

func TestValidateTranscoding(t *testing.T) {
	for _, c := range transcodingCases {
		_, err := runTranscoding(t, c.body)
		var field string
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.Code != CodeValidation {
				t.Fatalf("%s: %v", c.body, err)
			}
			field = ae.Field
		}
		if field != c.field {
			t.Errorf("%s: field %q (%v), want %q", c.body, field, err, c.field)
		}
	}
}

func TestTranscodingAliasAndValues(t *testing.T) {
	m, _ := decodeObject([]byte(`{"audio_transcoding":"mp3","force_key_frames":"2","gop":"48","filter_fps":"25"}`))
	f := newFields(context.Background(), nil, m)
	tr := validateTranscoding(f)
	if f.err() != nil || tr.AudioTranscoding != "mp3" || tr.ForceKeyFrames != 2.0 || *tr.GOP != 48 || *tr.FilterFPS != 25 {
		t.Fatalf("%+v %v", tr, f.err())
	}
	doc, _ := toDoc(tr)
	if doc["audio_trancoding"] != "mp3" {
		t.Fatalf("not returned with the spec spelling: %v", doc)
	}
	if len(f.vc.unknown) != 0 {
		t.Fatalf("alias counted as unknown: %v", f.vc.unknown)
	}
}

func TestUnknownFieldsAreCollected(t *testing.T) {
	m, _ := decodeObject([]byte(`{"gop":1,"colour":"red","nested":{"a":1}}`))
	f := newFields(context.Background(), nil, m)
	validateTranscoding(f)
	if f.err() != nil || len(f.vc.unknown) != 2 {
		t.Fatalf("unknown %v err %v", f.vc.unknown, f.err())
	}
}
