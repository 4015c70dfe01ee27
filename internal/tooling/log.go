package tooling

import (
	"log/slog"
	"os"
)

// Logger returns the text logger on stderr of a tool: at debug level when run with -v
// (verbose), at level otherwise.
func Logger(verbose bool, level slog.Level) *slog.Logger {
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
