package link

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// relayWarmUp is how long the relay drops nothing, reordering as it will after, before it
// starts losing: the loss tests are about the steady state, and a libsrt receiver (1.5.1)
// reaches it only with its first loss report. Until that, it schedules its periodic NAK
// 300 ms ahead (its initial NAK interval), and its first loss, once reported, waits that long
// for a second report: past a 200 ms latency when the report or the retransmission is lost
// and the sender's ACK timeout does not save it. Each loss report, reordering's too, sets the
// interval anew from the RTT measured by then: (RTT + 4·RTTVar)/2, at least 20 ms.
const relayWarmUp = time.Second

var (
	relayOnce sync.Once
	relayDir  string
	relayBin  string
	relayErr  error
)

// relayBinary builds testdata/lossyrelay once per test binary. The relay runs as its own
// process, without the race detector, so that its work does not slow the stack under test.
func relayBinary(t testing.TB) string {
	t.Helper()
	relayOnce.Do(func() {
		if relayDir, relayErr = os.MkdirTemp("", "lossyrelay"); relayErr != nil {
			return
		}
		relayBin = filepath.Join(relayDir, "lossyrelay")
		out, err := exec.Command("go", "build", "-o", relayBin, "./testdata/lossyrelay").CombinedOutput()
		if err != nil {
			relayErr = fmt.Errorf("build lossyrelay: %w: %s", err, out)
		}
	})
	if relayErr != nil {
		t.Fatal(relayErr)
	}
	return relayBin
}

// lossyRelay is a running testdata/lossyrelay between a client and server.
type lossyRelay struct {
	cmd  *exec.Cmd
	addr string
	done chan string // its last line: the counts
}

// newLossyRelay starts a relay to server dropping loss and reordering reorder of the
// datagrams each way; it stops when the test ends.
func newLossyRelay(t testing.TB, server string, loss, reorder float64) *lossyRelay {
	t.Helper()
	r := &lossyRelay{done: make(chan string, 1)}
	r.cmd = exec.Command(relayBinary(t), "-t", server, "-loss", fmt.Sprint(loss), "-reorder", fmt.Sprint(reorder),
		"-warmup", relayWarmUp.String(), "-seed", fmt.Sprint(time.Now().UnixNano()))
	r.cmd.SysProcAttr = childAttr()
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "ready ") {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		t.Fatalf("lossyrelay did not start: %q", lines.Text())
	}
	r.addr = strings.TrimPrefix(lines.Text(), "ready ")
	go func() {
		last := ""
		for lines.Scan() {
			last = lines.Text()
		}
		_ = r.cmd.Wait()
		r.done <- last
	}()
	t.Cleanup(func() { t.Logf("relay: %s", r.stop()) })
	return r
}

// Addr is where the client sends.
func (r *lossyRelay) Addr() string { return r.addr }

// stop ends the relay and returns its counts.
func (r *lossyRelay) stop() string {
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case s := <-r.done:
		r.done <- s
		return s
	case <-time.After(3 * time.Second):
		_ = r.cmd.Process.Kill()
		return "killed"
	}
}
