package bench

import "github.com/sluicemedia/sluice/internal/tooling"

// Proc is a child process the bench started: sluice, an ffmpeg reference or publisher, in its
// own process group with its output kept.
type Proc = tooling.Proc

// startProc starts bin with args and env (added to the bench's environment), in its own
// process group, keeping its output.
func startProc(name, bin string, env []string, args ...string) (*Proc, error) {
	return tooling.Start(name, bin, env, args...)
}

// ffmpeg starts ffmpeg with args after the quiet options.
func ffmpeg(name string, args ...string) (*Proc, error) {
	full := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"}, args...)
	return startProc(name, "ffmpeg", nil, full...)
}
