package soak

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ProcState is a lane process as it was before teardown.
type ProcState struct {
	Proc
	Lane string
	Record
	Stat Stat
}

// Snapshot reads every lane process's record and statistics.
func Snapshot(ctx context.Context, c *Client, f *Fixture) ([]ProcState, error) {
	stats := map[string]map[string]Stat{}
	for _, m := range []string{modVod, modRestream, modRecording} {
		s, err := c.Stats(ctx, m)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		stats[m] = s
	}
	var out []ProcState
	for _, l := range f.Lanes {
		for _, p := range l.Procs {
			r, err := c.Get(ctx, p.Module, p.ID)
			if err != nil {
				return nil, fmt.Errorf("snapshot: %w", err)
			}
			out = append(out, ProcState{Proc: p, Lane: l.Name, Record: r, Stat: stats[p.Module][p.ID]})
		}
	}
	return out, nil
}

// Teardown stops every process and server module, reads each recording's files once it has
// stopped, removes everything and stops the receivers. It returns the recordings' files by
// recording name, and carries on past errors, returning them joined.
func Teardown(ctx context.Context, c *Client, f *Fixture) (map[string][]RecordedFile, error) {
	var errs []error
	files := map[string][]RecordedFile{}
	procs := f.Procs()
	for _, p := range procs {
		if err := c.Stop(ctx, p.Module, p.ID); err != nil {
			errs = append(errs, fmt.Errorf("teardown: stop %s: %w", p.Name, err))
		}
	}
	for _, p := range procs {
		if p.Module == modRecording {
			r, err := c.Get(ctx, p.Module, p.ID)
			if err != nil {
				errs = append(errs, fmt.Errorf("teardown: read %s: %w", p.Name, err))
			} else {
				files[p.Name] = r.RecordedFiles
			}
		}
		if err := c.Remove(ctx, p.Module, p.ID); err != nil {
			errs = append(errs, fmt.Errorf("teardown: remove %s: %w", p.Name, err))
		}
	}
	for _, s := range f.Servers {
		if err := c.Stop(ctx, s.Module, s.ID); err != nil {
			errs = append(errs, fmt.Errorf("teardown: stop %s: %w", s.Name, err))
		}
		if err := c.Remove(ctx, s.Module, s.ID); err != nil {
			errs = append(errs, fmt.Errorf("teardown: remove %s: %w", s.Name, err))
		}
	}
	var wg sync.WaitGroup
	for _, r := range f.Receivers {
		wg.Go(r.Stop)
	}
	wg.Wait()
	return files, errors.Join(errs...)
}
