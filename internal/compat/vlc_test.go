package compat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// vlcUser is the unprivileged user VLC runs as when the tests run as root: VLC refuses root.
const vlcUser = "sluice-player"

var (
	vlcOnce sync.Once
	vlcCred *syscall.Credential // nil: run as the current user
	vlcErr  error
)

// vlcAccount returns the credentials VLC runs with: the current user, or, as root, vlcUser,
// created once (useradd) when missing.
func vlcAccount(t *testing.T) *syscall.Credential {
	t.Helper()
	vlcOnce.Do(func() {
		if os.Geteuid() != 0 {
			return
		}
		u, err := user.Lookup(vlcUser)
		if err != nil {
			out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", vlcUser).CombinedOutput()
			if err != nil {
				vlcErr = fmt.Errorf("useradd %s: %w: %s", vlcUser, err, out)
				return
			}
			if u, err = user.Lookup(vlcUser); err != nil {
				vlcErr = err
				return
			}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		vlcCred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: false}
	})
	if vlcErr != nil {
		t.Fatal(vlcErr)
	}
	return vlcCred
}

// vlcDir returns a folder the VLC user can read, with a home for VLC's own files: a test's
// temporary folder is private to its user.
func vlcDir(t *testing.T) string {
	t.Helper()
	cred := vlcAccount(t)
	dir, err := os.MkdirTemp("", "sluice-vlc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		if err := os.Chown(home, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// vlcErrors are the lines of VLC's log that tell a file did not play right: decoder,
// demuxer and packetizer errors, and timestamps VLC could not place (issue 19's AVI).
var vlcErrors = regexp.MustCompile(`(?m)^.*(decoder|demux|packetizer|input|video output|audio output) error: .*$|^.*(Could not convert timestamp|Timestamp conversion failed|buffer deadlock).*$`)

// vlcPlay plays a file (in a vlcDir folder) with VLC headless from at (0: the start), asking
// its position every 200 ms on its command line interface, until VLC ends by itself at the
// end of the file (--play-and-exit). It returns the positions seen once playing, and the
// length VLC gives the file, in whole seconds as VLC reports them.
func vlcPlay(t *testing.T, path string, at, media time.Duration) (positions []int, length int) {
	t.Helper()
	cred := vlcAccount(t)
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout(media))
	defer cancel()
	args := []string{"--intf", "dummy", "--extraintf", "rc", "--rc-fake-tty", "--play-and-exit", "--no-dbus",
		"--vout", "dummy", "--aout", "dummy", "--no-video-title-show", "-v"}
	if at > 0 {
		args = append(args, fmt.Sprintf("--start-time=%.3f", at.Seconds()))
	}
	cmd := exec.CommandContext(ctx, "cvlc", append(args, path)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(filepath.Dir(path), "home"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("cvlc: %v", err)
	}
	// Ask for the position and the length until VLC exits (its stdin is never closed before:
	// the command line interface would stop VLC at its end).
	done := make(chan struct{})
	var asker sync.WaitGroup
	asker.Add(1)
	go func() {
		defer asker.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if _, err := io.WriteString(stdin, "get_time\nget_length\n"); err != nil {
					return
				}
			}
		}
	}()
	// Answers come as "> 5" lines, get_time's then get_length's.
	var answers []int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(sc.Text()), "> "))
		if n, err := strconv.Atoi(line); err == nil {
			answers = append(answers, n)
		}
	}
	err = cmd.Wait()
	close(done)
	asker.Wait()
	stdin.Close()
	failed := true
	switch bad := vlcErrors.FindAllString(log.String(), 20); {
	case ctx.Err() != nil:
		t.Errorf("VLC did not end playing %s from %v within %v: it never reached the end", path, at, toolTimeout(media))
	case err != nil:
		t.Errorf("VLC playing %s: %v", path, err)
	case len(bad) > 0:
		t.Errorf("VLC playing %s from %v: %d errors:\n%s", path, at, len(bad), strings.Join(bad, "\n"))
	default:
		failed = false
	}
	for i := 0; i+1 < len(answers); i += 2 {
		if answers[i+1] > 0 { // playing: the length is known
			positions, length = append(positions, answers[i]), answers[i+1]
		}
	}
	if failed {
		t.Logf("VLC log:\n%s", tail(log.String(), 30))
	}
	return positions, length
}

// checkVLC plays a file with VLC from the start and from a seek to at: each playback ends by
// itself, without errors, after its positions went from where it started to the last second
// of the file; VLC's length is the file's, to the second.
func checkVLC(t *testing.T, path string, at, end time.Duration) {
	t.Helper()
	for _, from := range []time.Duration{0, at} {
		pos, length := vlcPlay(t, path, from, end)
		if len(pos) == 0 {
			t.Errorf("VLC from %v: no position reported while playing %s", from, path)
			continue
		}
		// Before the seek applies VLC may say 0; a seek that failed then goes 1, 2...
		for from > 0 && len(pos) > 1 && pos[0] == 0 {
			pos = pos[1:]
		}
		first, last := pos[0], pos[len(pos)-1]
		startOK := first <= int(from.Seconds())+1 && first >= int((from-gop).Seconds())-1
		if !startOK || last < int(end.Seconds())-1 || length < int(end.Seconds())-1 || length > int(end.Seconds())+1 {
			t.Errorf("VLC from %v: positions %d..%d s, length %d s; want from %v to the last second of %v", from, first, last, length, from, end)
		}
	}
}
