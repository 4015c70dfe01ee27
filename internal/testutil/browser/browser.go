// Package browser plays HLS and DASH in headless Chromium with hls.js and dash.js, through the
// node harness in testdata/player, so end-to-end tests can check what a viewer would see.
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// DefaultChromium is the browser the harness launches; SLUICE_CHROMIUM overrides it.
const DefaultChromium = "/usr/bin/chromium"

// startTimeout bounds how long a player may take to start playing (play.mjs --start-timeout).
const startTimeout = 20 * time.Second

// Result is what the harness reports of one playback.
type Result struct {
	// OK is true when playback advanced and no fatal error was reported.
	OK bool `json:"ok"`
	// Kind is "hls" or "dash".
	Kind string `json:"kind"`
	// Src is the played URL.
	Src string `json:"src"`
	// PlayedSeconds sums currentTime's playback-like steps over the window; seeks do not count.
	PlayedSeconds float64 `json:"playedSeconds"`
	// Advance is currentTime at the window's end minus at its start.
	Advance float64 `json:"advance"`
	// StartupSeconds is how long the player took from page load to playing; -1 if it never did.
	StartupSeconds float64 `json:"startupSeconds"`
	// Seeks counts currentTime jumps between samples that were not playback.
	Seeks int `json:"seeks"`
	// Stalls counts the video element's 'waiting' events during the window (playback stopped
	// for want of data).
	Stalls int `json:"stalls"`
	// Latency sums up the player's own measure of the distance to the live edge over the
	// window's samples (see Latency); nil when the player had none.
	Latency *Latency `json:"latency"`
	// ReadTimeouts counts state reads that waited over 5 s for the page and were skipped.
	ReadTimeouts int `json:"readTimeouts"`
	// Samples are the player states read every 500 ms during the window.
	Samples []Sample `json:"samples"`
	// Errors are the fatal player, video element and page errors.
	Errors []string `json:"errors"`
	// Warnings are the player's last non-fatal errors.
	Warnings []string `json:"warnings"`
	// Console holds the page's console errors and warnings (failed requests show here).
	Console []string `json:"console"`
	// Support maps codec strings to MediaSource.isTypeSupported in this browser.
	Support map[string]bool `json:"support"`
	// Decoded is what Chromium decoded by the window's end.
	Decoded Decoded `json:"decoded"`
	// Player is the player library and version, e.g. "hls.js 1.7.4".
	Player string `json:"player"`
	// Browser is Chromium's version.
	Browser string `json:"browser"`
	// Reason says why OK is false.
	Reason string `json:"reason"`
	// ElapsedSeconds is the harness's whole run time.
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	// Protocols counts the responses from the played URL's origin by the protocol Chromium
	// used ("h2", "http/1.1"), with the Protocols option; empty without.
	Protocols map[string]int `json:"protocols"`
	// CheckPage is what the CheckPage option read, or nil.
	CheckPage *PageCheck `json:"checkPage,omitempty"`
	// Stamp is what the page read of the glass-to-glass stamp over the window (Stamp option).
	Stamp *StampReading `json:"stamp,omitempty"`
}

// StampReading is the glass-to-glass reading of one playback: testdata/player/stamp.js decodes the
// bench publisher's stamp (internal/bench/stamp.go) off displayed frames about every 100 ms.
type StampReading struct {
	// Samples are [wall-clock ms since the epoch, latency ms] pairs.
	Samples [][2]float64 `json:"samples"`
	// Undecoded counts reads whose frame carried no valid stamp.
	Undecoded int `json:"undecoded"`
	// Stalls are the times (ms since the epoch) of the video element's waiting events after it
	// began playing.
	Stalls []float64 `json:"stalls"`
	// Reads counts the page's reads since it loaded; RVFC says whether they followed
	// requestVideoFrameCallback (else a 100 ms timer).
	Reads int  `json:"reads"`
	RVFC  bool `json:"rvfc"`
}

// PageCheck is what the harness read of a page of the media server itself (CheckPage).
type PageCheck struct {
	URL string `json:"url"`
	// Navigation is the page's own nextHopProtocol ("h2", "http/1.1").
	Navigation string `json:"navigation"`
	// Protocols counts the page's same-origin resource timing entries by nextHopProtocol.
	Protocols map[string]int `json:"protocols"`
	// Playing says its first video played; CurrentTime is where it was 2 s later.
	Playing     bool    `json:"playing"`
	CurrentTime float64 `json:"currentTime"`
	// Error is why the check could not finish.
	Error string `json:"error"`
}

// Latency is the player's own measure of the distance to the live edge over a playback window,
// in seconds: hls.js's hls.latency, dash.js's getCurrentLiveLatency().
type Latency struct {
	Last float64 `json:"last"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	// Target is hls.targetLatency (for LL-HLS, from PART-HOLD-BACK) or dash.js's
	// getTargetLiveDelay() (for low-latency DASH, from the MPD's ServiceDescription) at the end.
	Target *float64 `json:"target"`
	// LowLatencyMode is hls.lowLatencyMode, or dash.js's getLowLatencyModeEnabled(), at the end.
	LowLatencyMode bool `json:"lowLatencyMode"`
}

// Sample is one reading of the page's video element.
type Sample struct {
	// T is seconds since the window began.
	T           float64      `json:"t"`
	CurrentTime float64      `json:"currentTime"`
	Paused      bool         `json:"paused"`
	ReadyState  int          `json:"readyState"`
	Rate        float64      `json:"rate"`
	Buffered    [][2]float64 `json:"buffered"`
	VideoFrames int          `json:"videoFrames"`
	// AudioDecodedBytes is Chromium's webkitAudioDecodedByteCount.
	AudioDecodedBytes int64 `json:"audioDecodedBytes"`
	// ReadMS is how long reading this sample from the page took.
	ReadMS int `json:"readMs"`
	// Latency is the player's latency then (see Latency); Waiting counts 'waiting' events so far.
	Latency *float64 `json:"latency"`
	Waiting int      `json:"waiting"`
}

// Decoded counts what reached Chromium's decoders.
type Decoded struct {
	VideoFrames   int   `json:"videoFrames"`
	DroppedFrames int   `json:"droppedFrames"`
	AudioBytes    int64 `json:"audioBytes"`
	VideoBytes    int64 `json:"videoBytes"`
	Width         int   `json:"width"`
	Height        int   `json:"height"`
}

// String sums the result up in one line for test logs.
func (r Result) String() string {
	s := fmt.Sprintf("%s in Chromium %s: %s played %.1f s (advance %.1f s, startup %.1f s, %d seeks), "+
		"%d video frames (%dx%d), %d audio bytes decoded",
		r.Player, r.Browser, r.Kind, r.PlayedSeconds, r.Advance, r.StartupSeconds, r.Seeks,
		r.Decoded.VideoFrames, r.Decoded.Width, r.Decoded.Height, r.Decoded.AudioBytes)
	if r.Stalls > 0 {
		s += fmt.Sprintf("; %d stalls", r.Stalls)
	}
	if l := r.Latency; l != nil {
		s += fmt.Sprintf("; latency last %.2f s, mean %.2f s, max %.2f s (low-latency mode %v)", l.Last, l.Mean, l.Max, l.LowLatencyMode)
	}
	if len(r.Protocols) > 0 {
		s += fmt.Sprintf("; protocols %v", r.Protocols)
	}
	if r.ReadTimeouts > 0 {
		s += fmt.Sprintf("; %d state reads timed out", r.ReadTimeouts)
	}
	if len(r.Errors) > 0 {
		s += fmt.Sprintf("; errors: %q", r.Errors)
	}
	if r.Reason != "" {
		s += "; " + r.Reason
	}
	return s
}

// Option changes how Play plays.
type Option func(*config)

type config struct {
	liveDelay  time.Duration
	lowLatency bool
	screenshot string
	stamp      bool
	insecure   bool
	checkPage  string
	protocols  bool
}

// LowLatency plays with hls.js lowLatencyMode on (it is off otherwise) and dash.js live
// catch-up on (dash.js turns its low-latency mode on by itself when the MPD asks for it).
func LowLatency() Option { return func(c *config) { c.lowLatency = true } }

// Stamp reads the bench publisher's glass-to-glass stamp off the displayed frames into
// Result.Stamp.
func Stamp() Option { return func(c *config) { c.stamp = true } }

// LiveDelay keeps the player d behind a live edge (hls.js liveSyncDuration, dash.js liveDelay)
// instead of its default: 3 target durations for hls.js, @suggestedPresentationDelay for dash.js.
func LiveDelay(d time.Duration) Option { return func(c *config) { c.liveDelay = d } }

// Insecure makes Chromium accept any server certificate (--ignore-certificate-errors), to play
// from an HTTPS server with a self-signed one.
func Insecure() Option { return func(c *config) { c.insecure = true } }

// Protocols counts the played origin's responses by protocol into Result.Protocols (through
// DevTools' network events, which the page's cross-origin resource timing does not expose).
func Protocols() Option { return func(c *config) { c.protocols = true } }

// CheckPage opens url (a page of the media server, such as a player's watch page) after the
// playback window, waits for its first video to play, and reads into Result.CheckPage the
// protocols of the page and of its same-origin resources (resource timing's nextHopProtocol).
func CheckPage(url string) Option { return func(c *config) { c.checkPage = url } }

// Screenshot saves a PNG of the page at the end of the window to path.
func Screenshot(path string) Option { return func(c *config) { c.screenshot = path } }

// Play plays url ("hls" or "dash" kind) muted in headless Chromium, waits up to 20 s for
// playback to start, then watches it for d. It fails the test only when the harness itself
// fails; the caller judges the returned Result.
func Play(t testing.TB, kind, url string, d time.Duration, opts ...Option) Result {
	t.Helper()
	Require(t)
	r, err := Watch(kind, url, d, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("browser: %s", r)
	if !r.OK {
		t.Logf("browser: samples %+v; warnings %q; console %q", r.Samples, r.Warnings, r.Console)
	}
	return r
}

// Watch is Play outside a test (the bench): an error when the harness is missing or failed.
func Watch(kind, url string, d time.Duration, opts ...Option) (Result, error) {
	dir, missing := locate()
	if missing != "" {
		return Result{}, fmt.Errorf("browser: %s; run make deps", missing)
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	args := []string{
		filepath.Join(dir, "play.mjs"),
		"--kind", kind, "--src", url,
		"--duration", seconds(d),
		"--start-timeout", seconds(startTimeout),
		"--chromium", chromium(),
	}
	if c.liveDelay > 0 {
		args = append(args, "--live-delay", seconds(c.liveDelay))
	}
	if c.lowLatency {
		args = append(args, "--low-latency")
	}
	if c.stamp {
		args = append(args, "--stamp")
	}
	if c.screenshot != "" {
		args = append(args, "--screenshot", c.screenshot)
	}
	if c.insecure {
		args = append(args, "--insecure")
	}
	if c.checkPage != "" {
		args = append(args, "--check-page", c.checkPage)
	}
	if c.protocols {
		args = append(args, "--protocols")
	}

	// play.mjs bounds itself; this is the backstop should node hang.
	start := time.Now()
	budget := startTimeout + d + 90*time.Second
	if c.checkPage != "" {
		budget += startTimeout + 20*time.Second
	}
	stdout, stderr, err := RunNode(dir, budget, args...)
	r, perr := parse(stdout.Bytes())
	if perr != nil {
		return r, fmt.Errorf("browser: play %s %s: %w (exit: %s, after %v)\nstderr:\n%s", kind, url, perr, fmt.Sprint(err),
			time.Since(start).Round(time.Millisecond), tail(stderr.String(), 4000))
	}
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return r, fmt.Errorf("browser: play %s %s: harness failed (%w): %s\nstderr:\n%s", kind, url, err, r.Reason,
			tail(stderr.String(), 4000))
	}
	return r, nil
}

// RunNode runs node with args in dir (a harness script and its flags) and returns its output.
// Node and the Chromium it starts run in a process group of their own, so one signal reaches
// the whole tree: SIGTERM when timeout passes, SIGKILL to whatever is left once node returns.
func RunNode(dir string, timeout time.Duration, args ...string) (stdout, stderr *bytes.Buffer, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return stdout, stderr, err
}

// Require returns the harness folder (testdata/player) when node, Chromium and the npm packages
// are there. Otherwise it fails the test, saying what is missing (`make test` installs them all
// through make deps; a playback test never skips).
func Require(t testing.TB) string {
	t.Helper()
	dir, missing := locate()
	if missing == "" {
		return dir
	}
	t.Fatalf("browser playback test: %s; run make deps", missing)
	return ""
}

// locate finds testdata/player and says what is missing, if anything.
func locate() (dir, missing string) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node is not installed"
	}
	if v, err := nodeMajor(); err != nil {
		return "", err.Error()
	} else if v < 20 {
		return "", fmt.Sprintf("node %d is older than 20, which playwright-core needs", v)
	}
	if err := executable(chromium()); err != nil {
		return "", fmt.Sprintf("chromium %s: %v", chromium(), err)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err.Error()
	}
	dir = filepath.Join(root, "testdata", "player")
	for _, pkg := range []string{"hls.js", "dashjs", "playwright-core"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			return "", fmt.Sprintf("npm package %s is not installed in %s (npm ci there)", pkg, dir)
		}
	}
	return dir, ""
}

// moduleRoot walks up from the working directory (a test's package folder) to go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find module root: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("find module root: no go.mod above %s", wd)
		}
	}
}

// nodeMajor returns node's major version.
func nodeMajor() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", "-p", "process.versions.node").Output()
	if err != nil {
		return 0, fmt.Errorf("node -p process.versions.node: %w", err)
	}
	major, _, _ := strings.Cut(strings.TrimSpace(string(out)), ".")
	return strconv.Atoi(major)
}

func chromium() string {
	if p := os.Getenv("SLUICE_CHROMIUM"); p != "" {
		return p
	}
	return DefaultChromium
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return errors.New("not installed")
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// parse reads the JSON line play.mjs prints last.
func parse(out []byte) (Result, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return Result{}, errors.New("harness printed no result")
	}
	var r Result
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		return Result{}, fmt.Errorf("harness result %q: %w", tail(last, 200), err)
	}
	return r, nil
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
