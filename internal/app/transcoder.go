package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/metrics"
	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/storage"
	"github.com/sluicemedia/sluice/transcode"
)

// transcoder puts an ffmpeg job between a process's input Stream and its sinks when the record
// asks for transcoding.
type transcoder struct {
	ffmpeg string
	hw     transcode.HW
	opts   stream.Options
}

// attach returns the Stream the sinks read: the input's own for passthrough, or the output of
// a transcode part it adds to p.
func (tr *transcoder) attach(p *Pipeline, id string, rec *storage.Transcoding, log *slog.Logger) *stream.Stream {
	tc := transcodeSettings(rec)
	if transcode.Passthrough(tc) {
		return p.Stream
	}
	in := p.Stream
	o := tr.opts
	o.Log = log
	out := stream.New(id+"/transcoded", o)
	cur := &transcodeJob{}
	p.Sinks = append(p.Sinks, Part{Name: "transcode", Run: tr.run(in, out, tc, cur, log.With("part", "transcode"))})
	p.Figures = append(p.Figures, cur.figures)
	prev := p.Close
	p.Close = func() {
		out.Close()
		if prev != nil {
			prev()
		}
	}
	return out
}

func (tr *transcoder) run(in, out *stream.Stream, tc *transcode.Settings, cur *transcodeJob, log *slog.Logger) supervisor.RunFunc {
	return func(ctx context.Context, rep supervisor.Reporter) error {
		tracks, err := waitTracks(ctx, in)
		if err != nil || ctx.Err() != nil {
			return nil
		}
		args, err := transcode.Args(tc, tracks, tr.hw)
		if err != nil {
			return supervisor.Permanent(err)
		}
		for _, n := range transcode.Notes(tc, tracks, tr.hw) {
			log.Info("transcoding note", "note", n)
		}
		job := transcode.NewJob(transcode.JobConfig{FFmpeg: tr.ffmpeg, Args: args, Input: in, Tracks: tracks, Output: out, Log: log,
			OnStart: func(pid int) { cur.pid.Store(int64(pid)) }})
		cur.job.Store(job)
		rep.SetState(supervisor.Running)
		err = job.Run(ctx)
		cur.pid.Store(0)
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil, errors.Is(err, transcode.ErrInputChanged):
			// The input went away or came back with other codecs: start again with fresh arguments.
			return fmt.Errorf("transcode: %w", supervisor.ErrInputGone)
		}
		return err
	}
}

// transcodeJob is a process's current ffmpeg job, for metrics.
type transcodeJob struct {
	job atomic.Pointer[transcode.Job]
	pid atomic.Int64 // ffmpeg's process id while it runs; 0 otherwise
}

// figures reports the job's last progress and its ffmpeg's CPU time.
func (tj *transcodeJob) figures(p *metrics.Process) {
	t := &metrics.Transcode{}
	if pid := tj.pid.Load(); pid > 0 {
		if st, err := procfs.ReadStat(int(pid)); err == nil && !st.Zombie() {
			t.Running, t.CPU = true, st.CPU
		}
	}
	if j := tj.job.Load(); j != nil && t.Running {
		pr := j.Progress()
		t.Speed, t.FPS = pr.Speed, pr.FPS
	}
	p.Transcode = t
}

// check refuses, at create, what the transcoder cannot do on this server: a hardware encoder
// it does not have, a value ffmpeg cannot take. It maps against a typical H.264+AAC input.
func (tr *transcoder) check(rec *storage.Transcoding) error {
	tc := transcodeSettings(rec)
	if transcode.Passthrough(tc) {
		return nil
	}
	typical := []media.Track{
		{ID: 0, Codec: media.CodecH264, ClockRate: 90000},
		{ID: 1, Codec: media.CodecAAC, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}},
	}
	if _, err := transcode.Args(tc, typical, tr.hw); err != nil {
		return fmt.Errorf("%w: %w", api.ErrUnsupported, err)
	}
	return nil
}

// transcodeSettings hands a record's transcoding object to transcode as plain values (nil stays
// nil: passthrough).
func transcodeSettings(t *storage.Transcoding) *transcode.Settings {
	if t == nil {
		return nil
	}
	return &transcode.Settings{
		VideoTranscoding: t.VideoTranscoding, OutputVideoBitrate: t.OutputVideoBitrate, ForceKeyFrames: t.ForceKeyFrames,
		GOP: t.GOP, FrameWidth: t.FrameWidth, FrameHeight: t.FrameHeight, Preset: t.Preset, Tune: t.Tune, CRF: t.CRF,
		PixFmt: t.PixFmt, FilterFPS: t.FilterFPS, AudioTranscoding: t.AudioTranscoding,
		OutputAudioBitrate: t.OutputAudioBitrate, SampleRate: t.SampleRate, Slices: t.Slices, Cores: t.Cores,
	}
}
