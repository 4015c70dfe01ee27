package sysstats

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// SpeedTester measures the network against another sluice's speed-test peer endpoints
// (/api/utils/speedtest/{ping,download,upload}), or runs an Ookla speedtest binary.
type SpeedTester struct {
	// URL is the peer's base URL, e.g. http://10.0.0.2:8080/api/utils/speedtest.
	URL string
	// Command, when set, is an Ookla `speedtest` binary whose JSON result is returned instead.
	Command string
	// Phase is how long download and upload each run. Default 3 s.
	Phase time.Duration
	// Pings is how many latency probes are sent. Default 10.
	Pings int

	mu  sync.Mutex
	cur *speedRun // the run under way, shared by every caller meanwhile
}

// speedRun is one measurement and its outcome, set before done closes.
type speedRun struct {
	done chan struct{}
	v    any
	err  error
}

// maxSpeedRun bounds one measurement, which runs on for the callers that still wait when the
// one that started it goes: a peer's three phases take about 10 s, an Ookla run about 30 s.
const maxSpeedRun = 2 * time.Minute

// SpeedResult is the Ookla-shaped result. Units: ms for latency, jitter and elapsed; bytes per
// second for bandwidth; bytes for bytes; percent for packetLoss.
type SpeedResult struct {
	Timestamp  time.Time     `json:"timestamp"`
	Ping       SpeedPing     `json:"ping"`
	Download   SpeedTransfer `json:"download"`
	Upload     SpeedTransfer `json:"upload"`
	PacketLoss *float64      `json:"packetLoss"` // null: not measured over HTTP
	ISP        string        `json:"isp"`
	Interface  SpeedIface    `json:"interface"`
	Server     SpeedServer   `json:"server"`
}

// SpeedPing is latency and jitter in ms.
type SpeedPing struct {
	Jitter  float64 `json:"jitter"`
	Latency float64 `json:"latency"`
}

// SpeedTransfer is one direction: bytes per second, bytes, and ms.
type SpeedTransfer struct {
	Bandwidth float64 `json:"bandwidth"`
	Bytes     int64   `json:"bytes"`
	Elapsed   float64 `json:"elapsed"`
}

// SpeedIface is the local interface the test ran over.
type SpeedIface struct {
	Name       string `json:"name"`
	InternalIP string `json:"internalIp"`
	MacAddr    string `json:"macAddr"`
}

// SpeedServer names the peer measured against.
type SpeedServer struct {
	URL  string `json:"url"`
	Host string `json:"host"`
}

// downloadChunk and uploadChunk are the sizes of one request of each phase.
const (
	downloadChunk = 16 << 20
	uploadChunk   = 4 << 20
)

// Run measures, or answers ErrNotAvailable when nothing is configured. One measurement runs at
// a time: a call while one is under way waits for it and gets its result, since two at once
// would share the link they measure (and start as many Ookla processes).
func (st *SpeedTester) Run(ctx context.Context) (any, error) {
	st.mu.Lock()
	r := st.cur
	if r == nil {
		r = &speedRun{done: make(chan struct{})}
		st.cur = r
		go func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxSpeedRun)
			defer cancel()
			r.v, r.err = st.run(rctx)
			st.mu.Lock()
			st.cur = nil
			st.mu.Unlock()
			close(r.done)
		}()
	}
	st.mu.Unlock()
	select {
	case <-r.done:
		return r.v, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run is one measurement.
func (st *SpeedTester) run(ctx context.Context) (any, error) {
	if st.Command != "" {
		return st.runOokla(ctx)
	}
	if st.URL == "" {
		return nil, fmt.Errorf("%w: no speed-test target is configured; start sluice with --speedtest-url "+
			"(or SLUICE_SPEEDTEST_URL) set to another sluice's http://host:port/api/utils/speedtest", ErrNotAvailable)
	}
	phase, pings := st.Phase, st.Pings
	if phase <= 0 {
		phase = 3 * time.Second
	}
	if pings <= 0 {
		pings = 10
	}
	base := strings.TrimRight(st.URL, "/")
	var local net.Addr
	trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { local = ci.Conn.LocalAddr() }}
	ctx = httptrace.WithClientTrace(ctx, trace)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 2}}
	defer client.CloseIdleConnections()

	res := SpeedResult{Timestamp: time.Now().UTC(), Server: SpeedServer{URL: st.URL}}
	var err error
	if res.Ping, err = measurePing(ctx, client, base+"/ping", pings); err != nil {
		return nil, err
	}
	if res.Download, err = measure(ctx, phase, func(ctx context.Context) (int64, error) {
		return get(ctx, client, fmt.Sprintf("%s/download?bytes=%d", base, downloadChunk))
	}); err != nil {
		return nil, err
	}
	if res.Upload, err = measure(ctx, phase, func(ctx context.Context) (int64, error) {
		return upload(ctx, client, base+"/upload")
	}); err != nil {
		return nil, err
	}
	if u, perr := url.Parse(base); perr == nil {
		res.Server.Host = u.Hostname()
	}
	res.Interface = ifaceOf(local)
	res.ISP = ispOf(res.Server.Host)
	return res, nil
}

func measurePing(ctx context.Context, client *http.Client, url string, n int) (SpeedPing, error) {
	var rtts []float64
	for i := 0; i <= n; i++ {
		start := time.Now()
		if _, err := get(ctx, client, url); err != nil {
			return SpeedPing{}, err
		}
		if i > 0 { // the first probe opens the connection
			rtts = append(rtts, float64(time.Since(start))/float64(time.Millisecond))
		}
	}
	var sum, jit float64
	for i, r := range rtts {
		sum += r
		if i > 0 {
			d := r - rtts[i-1]
			if d < 0 {
				d = -d
			}
			jit += d
		}
	}
	p := SpeedPing{Latency: round2(sum / float64(len(rtts)))}
	if len(rtts) > 1 {
		p.Jitter = round2(jit / float64(len(rtts)-1))
	}
	return p, nil
}

// measure repeats one transfer until the phase has run, and reports the total.
func measure(ctx context.Context, phase time.Duration, once func(context.Context) (int64, error)) (SpeedTransfer, error) {
	start := time.Now()
	var total int64
	for time.Since(start) < phase {
		n, err := once(ctx)
		total += n
		if err != nil {
			return SpeedTransfer{}, err
		}
	}
	el := time.Since(start)
	return SpeedTransfer{
		Bandwidth: round2(float64(total) / el.Seconds()),
		Bytes:     total,
		Elapsed:   round2(float64(el) / float64(time.Millisecond)),
	}, nil
}

func get(ctx context.Context, client *http.Client, target string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, fmt.Errorf("speed test: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w: speed test: %w", ErrNotAvailable, err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("%w: speed test: %s answered %s", ErrNotAvailable, target, resp.Status)
	}
	return n, err
}

// uploadBody is the bytes every upload sends (read-only).
var uploadBody = bytes.Repeat([]byte("sluice speed test "), uploadChunk/18+1)[:uploadChunk]

func upload(ctx context.Context, client *http.Client, target string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(uploadBody))
	if err != nil {
		return 0, fmt.Errorf("speed test: %w", err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w: speed test: %w", ErrNotAvailable, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%w: speed test: %s answered %s", ErrNotAvailable, target, resp.Status)
	}
	return int64(len(uploadBody)), nil
}

// ifaceOf finds the interface that holds the local address of the test's connection.
func ifaceOf(local net.Addr) SpeedIface {
	ta, ok := local.(*net.TCPAddr)
	if !ok {
		return SpeedIface{}
	}
	out := SpeedIface{InternalIP: ta.IP.String()}
	ifs, err := net.Interfaces()
	if err != nil {
		return out
	}
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.Equal(ta.IP) {
				out.Name, out.MacAddr = ifc.Name, ifc.HardwareAddr.String()
				if out.MacAddr == "" {
					out.MacAddr = "00:00:00:00:00:00"
				}
				return out
			}
		}
	}
	return out
}

// ispOf names the provider as far as a server can know it without an outside lookup.
func ispOf(host string) string {
	ip := net.ParseIP(host)
	if ip == nil {
		if addrs, err := net.LookupIP(host); err == nil && len(addrs) > 0 {
			ip = addrs[0]
		}
	}
	if ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
		return "local network"
	}
	return "unknown"
}

// runOokla runs an Ookla speedtest binary and returns its JSON result as is.
func (st *SpeedTester) runOokla(ctx context.Context) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, st.Command, "--format=json", "--accept-license", "--accept-gdpr").Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotAvailable, st.Command, err)
	}
	var v json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(out), &v); err != nil {
		return nil, fmt.Errorf("%w: %s printed no JSON: %w", ErrNotAvailable, st.Command, err)
	}
	return v, nil
}
