package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/storage"
)

// errNoMediaPath is what a process reports until its media pipeline is built.
type errNoMediaPath struct{ module storage.Module }

func (e errNoMediaPath) Error() string {
	return fmt.Sprintf("the media path of %s is not built in this version", e.module)
}

// mediaRunners builds the pipeline of every record kind.
func mediaRunners(_ Config, _ *slog.Logger) RunnerFactory {
	return func(rec storage.Record) (*Pipeline, error) {
		mod := rec.Module()
		return &Pipeline{Input: &Part{Name: "input", Run: func(ctx context.Context, _ supervisor.Reporter) error {
			return supervisor.Permanent(errNoMediaPath{mod})
		}}}, nil
	}
}
