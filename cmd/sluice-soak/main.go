// Command sluice-soak is the endurance test of `make soak`: it starts bin/sluice, runs
// publisher connect/drop cycles and transcoding restream cycles through the API, and checks
// that goroutines, open descriptors, child processes and memory come back to their baseline
// and that every recorded file plays. It prints a before/after table and exits 1 when a
// check fails, 2 when the soak cannot run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sluicemedia/sluice/internal/soak"
	"github.com/sluicemedia/sluice/internal/tooling"
)

func main() {
	cfg := soak.Config{Limits: soak.DefaultLimits, Out: os.Stdout}
	flag.StringVar(&cfg.Bin, "bin", "bin/sluice", "sluice binary to soak")
	flag.StringVar(&cfg.FFmpeg, "ffmpeg", "ffmpeg", "ffmpeg binary (clip, receivers)")
	flag.StringVar(&cfg.FFprobe, "ffprobe", "ffprobe", "ffprobe binary (recorded files)")
	flag.IntVar(&cfg.Cycles, "cycles", 1000, "publisher connect/drop cycles over SRT, RTMP and UDP")
	flag.IntVar(&cfg.Transcodes, "transcodes", 100, "create/start/stop/remove cycles of transcoding restreams")
	flag.DurationVar(&cfg.Settle, "settle", 5*time.Second, "wait after the teardown before the final sample")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the temporary folder (data, recordings, server log)")
	verbose := flag.Bool("v", false, "log the publishers' and the soak's debug messages to stderr")
	flag.Parse()

	log := tooling.Logger(*verbose, slog.LevelError)
	// The protocol clients the publishers use log through the default logger.
	slog.SetDefault(log)
	cfg.Log = log

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	v, err := soak.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "soak: cannot run: %v\n", err)
		os.Exit(2)
	}
	if !v.OK() {
		fmt.Println("\nSOAK FAILED:")
		for _, r := range v.Reasons() {
			fmt.Println("  - " + r)
		}
		os.Exit(1)
	}
	fmt.Println("\nSOAK PASSED")
}
