package hostile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"strings"
	"time"
)

// probeEnv makes the test binary the probe: a process of its own, like a user's client, so that
// the attackers' goroutines and garbage in the test process do not slow the probe's requests.
// Its value is the API's base URL; the token comes in probeTokenEnv.
const (
	probeEnv      = "SLUICE_HOSTILE_PROBE"
	probeTokenEnv = "SLUICE_HOSTILE_PROBE_TOKEN"
)

// probeLine is one probe request as the probe process reports it, one JSON object a line.
type probeLine struct {
	Sent    int64         `json:"sent"` // Unix nanoseconds
	Took    time.Duration `json:"took"`
	Connect time.Duration `json:"connect"`
	Wrote   time.Duration `json:"wrote"`
	First   time.Duration `json:"first"`
	Err     string        `json:"err,omitempty"` // the failure, or the status when not 200
	// Timeout tells that the request failed only for want of an answer within probeTimeout:
	// a slow answer, judged as the others are.
	Timeout bool `json:"timeout,omitempty"`
}

// runProbe is the probe process: every probeEvery, POST /api/vod/getAll with the token on a new
// connection, until its standard input closes.
func runProbe(base, token string) int {
	if canRaise() {
		if err := setNice(os.Getpid(), probeNice); err != nil {
			fmt.Fprintln(os.Stderr, "probe: raise its priority:", err)
			return 1
		}
	}
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	out := json.NewEncoder(os.Stdout)
	client := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return 0
		case <-tick.C:
		}
		req, _ := http.NewRequest(http.MethodPost, base+"/api/vod/getAll", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-access-token", token)
		var l probeLine
		t0 := time.Now()
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			ConnectDone:          func(string, string, error) { l.Connect = time.Since(t0) },
			WroteRequest:         func(httptrace.WroteRequestInfo) { l.Wrote = time.Since(t0) },
			GotFirstResponseByte: func() { l.First = time.Since(t0) },
		}))
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s", resp.Status)
			}
		}
		l.Sent, l.Took = t0.UnixNano(), time.Since(t0)
		if err != nil {
			l.Err = err.Error()
			var ne net.Error
			l.Timeout = errors.As(err, &ne) && ne.Timeout()
		}
		if out.Encode(l) != nil {
			return 1
		}
	}
}

// startProbe starts the probe process against s; its lines go to w.
func (w *watch) startProbe() error {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), probeEnv+"="+w.s.base, probeTokenEnv+"="+w.s.token)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	w.probeIn = stdin
	w.wg.Go(func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l probeLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				continue // not a report line (a test framework's line)
			}
			a := answer{sent: time.Unix(0, l.Sent), took: l.Took, connect: l.Connect, wrote: l.Wrote, first: l.First}
			a.at = a.sent.Sub(w.start)
			w.mu.Lock()
			if l.Err != "" && !l.Timeout {
				w.f.failures = append(w.f.failures, fmt.Sprintf("%s after %v", l.Err, l.Took.Round(time.Millisecond)))
			} else {
				w.answers = append(w.answers, a)
			}
			w.mu.Unlock()
		}
		_ = cmd.Wait()
	})
	return nil
}
