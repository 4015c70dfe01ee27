package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/cluster"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/storage"
)

// Config is every setting of the server. Each has a flag and a SLUICE_* environment variable;
// a flag given on the command line wins over the environment, which wins over the default.
type Config struct {
	// Addr is the API and playback listen address. Default ":8080".
	Addr string
	// Data is the folder for the database and recordings. Default "./data".
	Data string
	// Store is the URL of a PostgreSQL database (postgres://… or postgresql://…) that keeps the
	// records instead of the SQLite file in Data. Default: empty, the SQLite file.
	Store string
	// FFmpeg is the ffmpeg binary used for transcoding and the test stream. Default "ffmpeg" from PATH.
	FFmpeg string
	// FFmpegNice is how many nice levels below the server its ffmpeg children run (0 to 19;
	// 0: the server's priority). Default 19 (supervisor.DefaultNice).
	FFmpegNice int
	// PublicURL is the base URL whose host is put in the playlist URLs the API returns.
	// Default: empty, the host of each request.
	PublicURL string
	// TokenTTL is the lifetime of issued tokens. Default 720h (30 days).
	TokenTTL time.Duration
	// LogLevel is debug, info, warn or error. Default info.
	LogLevel string
	// LogFormat is text (logfmt-like key=value lines) or json (one JSON object a line, slog's
	// JSON handler). Default text.
	LogFormat string
	// ShutdownTimeout bounds a graceful stop. Default 10s.
	ShutdownTimeout time.Duration
	// SpeedtestURL is the base URL of the speed-test target (another sluice's /api/utils/speedtest).
	// Default: none, and the speed test answers 503.
	SpeedtestURL string
	// SpeedtestCmd is an Ookla `speedtest` binary; when set, its JSON result is returned instead.
	// Default: none.
	SpeedtestCmd string
	// DebugAddr, when set, serves Go's pprof profiles (/debug/pprof/) on this address, for
	// profiling and benchmarks. Default: none. Keep it on loopback: it has no authentication.
	DebugAddr string
	// MediaBind is the IP address that players' ports, listen inputs and server modules bind.
	// Default: empty, every interface.
	MediaBind string
	// AdminPassword is the admin's password on first start (SLUICE_ADMIN_PASSWORD only, no flag).
	// Default: generated and printed once.
	AdminPassword string
	// InputSchemes are the ffmpeg protocols an INPUT_TYPE_OTHER address may use. Default
	// api.DefaultInputSchemes (http, https, rtmp, rtmps, rtmpt, rtmpts, rtsp, rtsps, srt, udp, rtp).
	InputSchemes []string
	// PlayerMaxBytes caps each player's segment window in memory, bytes (segment.StoreOptions.MaxBytes).
	PlayerMaxBytes int64
	// MemoryRecordingMaxBytes caps what each memory recording holds, bytes (record.MemoryOptions.MaxBytes).
	MemoryRecordingMaxBytes int64
	// AllowLocalFiles lets an INPUT_TYPE_OTHER address be a path on the server or a file: URL.
	// Default false.
	AllowLocalFiles bool
	// MetricsToken turns on GET /metrics (Prometheus) for scrapes that present it as a bearer
	// token or a basic-auth password. Default: empty, metrics off (/metrics answers 404).
	MetricsToken string
	// MetricsAddr, when set, serves /metrics on this address only, instead of the API port.
	// Default: empty, the API port. Needs MetricsToken.
	MetricsAddr string
	// WebhookRetryMin is the wait after a webhook delivery's first failed attempt; each
	// failure doubles it up to WebhookRetryMax. Default 1s.
	WebhookRetryMin time.Duration
	// WebhookRetryMax caps the wait between a delivery's attempts. Default 10m.
	WebhookRetryMax time.Duration
	// EventStatsEvery is the period of the event stream's server_stats event, at least 1s
	// (events.Options.StatsEvery). Default 10s.
	EventStatsEvery time.Duration

	// TLS is HTTPS with HTTP/2 on the API and player ports (config_tls.go).
	TLS TLSSettings

	ClusterConfig
}

// ClusterConfig are the settings of a node of a cluster (issue 17): they apply only with a
// PostgreSQL Store, where every server sharing the database is a node.
type ClusterConfig struct {
	// ClusterNodeID names the node; unique among running nodes, at most 100 bytes without white
	// space. Default: empty, the id kept in Data's node-id file, made at the first start from
	// the host name and a random suffix (cluster.KeptID).
	ClusterNodeID string
	// ClusterAPIURL is where the other nodes and operators reach this node's API (shown by
	// /api/nodes/getAll). Default: empty.
	ClusterAPIURL string
	// ClusterPublicURL is where viewers reach this node's playback. Default: empty, PublicURL.
	ClusterPublicURL string
	// ClusterRenew is how often the node heartbeats, renews its leases and places orphans.
	// Default 3s.
	ClusterRenew time.Duration
	// ClusterLeaseTTL is how long a lease lives without a renewal: a dead node's records move
	// after it. At least twice ClusterRenew; the same on every node. Default 10s.
	ClusterLeaseTTL time.Duration
	// ClusterFFmpegMax is how many ffmpeg children the node runs at most (placement gives a
	// full node nothing); 0: no limit. Default 0.
	ClusterFFmpegMax int
	// ClusterCPU counts the machine's CPU share in use in the capacity placement compares;
	// false for nodes that share one machine, where it says nothing about the node. Default true.
	ClusterCPU bool
	// ClusterPlayback is how the node answers a request for what another node holds (a
	// player's files and watch page, a recording's download): "redirect" (307 to that node)
	// or "proxy" (fetched from that node and passed on). Default "redirect".
	ClusterPlayback string
}

// clusterSettings are the settings of ClusterConfig (kept apart from the others).
func clusterSettings(dur func(func(*Config) *time.Duration) func(*Config, string) error,
	str func(func(*Config) *string) func(*Config, string) error,
	boolean func(func(*Config) *bool) func(*Config, string) error) []setting {
	count := func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > 100000 {
			return fmt.Errorf("%q is not a count from 0 to 100000", v)
		}
		c.ClusterFFmpegMax = n
		return nil
	}
	return []setting{
		{"cluster-node-id", "SLUICE_CLUSTER_NODE_ID", "", "with a PostgreSQL --store: this node's id, unique among running nodes, at most 100 bytes without white space (empty: the one kept in <data>/node-id, made at the first start from the host name and a random suffix)", str(func(c *Config) *string { return &c.ClusterNodeID })},
		{"cluster-api-url", "SLUICE_CLUSTER_API_URL", "", "with a PostgreSQL --store: where this node's API is reached, e.g. http://10.0.0.2:8080 (shown by /api/nodes/getAll)", str(func(c *Config) *string { return &c.ClusterAPIURL })},
		{"cluster-public-url", "SLUICE_CLUSTER_PUBLIC_URL", "", "with a PostgreSQL --store: where viewers reach this node's playback (empty: --public-url)", str(func(c *Config) *string { return &c.ClusterPublicURL })},
		{"cluster-renew", "SLUICE_CLUSTER_RENEW", "3s", "with a PostgreSQL --store: heartbeat, lease renewal and orphan placement interval (duration)", dur(func(c *Config) *time.Duration { return &c.ClusterRenew })},
		{"cluster-lease-ttl", "SLUICE_CLUSTER_LEASE_TTL", "10s", "with a PostgreSQL --store: lease lifetime without renewal, after which a dead node's records move (duration, at least twice --cluster-renew, the same on every node)", dur(func(c *Config) *time.Duration { return &c.ClusterLeaseTTL })},
		{"cluster-ffmpeg-max", "SLUICE_CLUSTER_FFMPEG_MAX", "0", "with a PostgreSQL --store: ffmpeg children this node runs at most, for placement (0: no limit)", count},
		{"cluster-playback", "SLUICE_CLUSTER_PLAYBACK", "redirect", "with a PostgreSQL --store: how a request for a player or a recorded file another node holds is answered: redirect (307 to that node) or proxy (this node fetches it from that node)", str(func(c *Config) *string { return &c.ClusterPlayback })},
		{"cluster-cpu", "SLUICE_CLUSTER_CPU", "true", "with a PostgreSQL --store: count the machine's CPU use in this node's capacity (false for nodes sharing one machine)", boolean(func(c *Config) *bool { return &c.ClusterCPU })},
	}
}

// minEventStatsEvery is the shortest server_stats period: each one samples the CPU for 250 ms.
const minEventStatsEvery = time.Second

// boolSettings are the settings given as a bare flag (--allow-local-files) or true/false.
var boolSettings = map[string]bool{"allow-local-files": true, "cluster-cpu": true}

// boolFlag is a string flag that may be given bare, meaning true.
type boolFlag struct{ v *string }

func (b boolFlag) String() string {
	if b.v == nil {
		return ""
	}
	return *b.v
}
func (b boolFlag) Set(s string) error { *b.v = s; return nil }
func (b boolFlag) IsBoolFlag() bool   { return true }

// setting describes one configuration entry for flags, the environment and --help.
type setting struct {
	name, env, def, help string
	set                  func(c *Config, v string) error
}

func settings() []setting {
	str := func(f func(*Config) *string) func(*Config, string) error {
		return func(c *Config, v string) error { *f(c) = v; return nil }
	}
	dur := func(f func(*Config) *time.Duration) func(*Config, string) error {
		return func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("%q is not a positive duration (e.g. 10s, 720h)", v)
			}
			*f(c) = d
			return nil
		}
	}
	size := func(f func(*Config) *int64) func(*Config, string) error {
		return func(c *Config, v string) error {
			n, err := parseSize(v)
			if err != nil {
				return err
			}
			*f(c) = n
			return nil
		}
	}
	boolean := func(f func(*Config) *bool) func(*Config, string) error {
		return func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			*f(c) = b
			return nil
		}
	}
	niceLevels := func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > 19 {
			return fmt.Errorf("%q is not a number of nice levels from 0 to 19", v)
		}
		c.FFmpegNice = n
		return nil
	}
	schemes := func(c *Config, v string) error {
		list := []string{}
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
				list = append(list, s)
			}
		}
		if err := api.CheckInputSchemes(list); err != nil {
			return err
		}
		c.InputSchemes = list
		return nil
	}
	return append([]setting{
		{"addr", "SLUICE_ADDR", ":8080", "API and playback listen address (host:port)", str(func(c *Config) *string { return &c.Addr })},
		{"data", "SLUICE_DATA", "./data", "data folder: database and recordings", str(func(c *Config) *string { return &c.Data })},
		{"store", "SLUICE_STORE", "", "PostgreSQL URL (postgres://user:password@host:5432/db) to keep the records in (empty: the SQLite file sluice.db in the data folder)", str(func(c *Config) *string { return &c.Store })},
		{"ffmpeg", "SLUICE_FFMPEG", "ffmpeg", "ffmpeg binary (path, or a name looked up in PATH)", str(func(c *Config) *string { return &c.FFmpeg })},
		{"ffmpeg-nice", "SLUICE_FFMPEG_NICE", strconv.Itoa(supervisor.DefaultNice), "nice levels below the server's CPU priority that ffmpeg children run at, 0 to 19 (0: the same; 19: also SCHED_IDLE on Linux), so that encoding never starves the API", niceLevels},
		{"public-url", "SLUICE_PUBLIC_URL", "", "base URL whose host goes into returned playlist URLs (empty: the request's host)", str(func(c *Config) *string { return &c.PublicURL })},
		{"token-ttl", "SLUICE_TOKEN_TTL", "720h", "lifetime of issued API tokens (duration)", dur(func(c *Config) *time.Duration { return &c.TokenTTL })},
		{"log-level", "SLUICE_LOG_LEVEL", "info", "log level: debug, info, warn, error", str(func(c *Config) *string { return &c.LogLevel })},
		{"log-format", "SLUICE_LOG_FORMAT", "text", "log line format: text (key=value) or json (one object a line)", str(func(c *Config) *string { return &c.LogFormat })},
		{"shutdown-timeout", "SLUICE_SHUTDOWN_TIMEOUT", "10s", "time allowed for a graceful stop (duration)", dur(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
		{"speedtest-cmd", "SLUICE_SPEEDTEST_CMD", "", "Ookla speedtest binary to run instead of the built-in test (empty: built-in)", str(func(c *Config) *string { return &c.SpeedtestCmd })},
		{"debug-addr", "SLUICE_DEBUG_ADDR", "", "serve pprof profiles at /debug/pprof/ on this address, e.g. 127.0.0.1:6060 (empty: off; no authentication)", str(func(c *Config) *string { return &c.DebugAddr })},
		{"media-bind", "SLUICE_MEDIA_BIND", "", "IP address that players, listen inputs and SRT/RTMP server modules bind (empty: every interface)", str(func(c *Config) *string { return &c.MediaBind })},
		{"speedtest-url", "SLUICE_SPEEDTEST_URL", "", "speed-test target: base URL of another sluice's /api/utils/speedtest (empty: speed test answers 503)", str(func(c *Config) *string { return &c.SpeedtestURL })},
		{"input-schemes", "SLUICE_INPUT_SCHEMES", strings.Join(api.DefaultInputSchemes, ","), "ffmpeg protocols an INPUT_TYPE_OTHER address may use (comma-separated; empty: none)", schemes},
		{"player-max-bytes", "SLUICE_PLAYER_MAX_BYTES", "2GiB", "memory cap of each player's segment window (bytes, or with KiB, MiB, GiB); past it the oldest segments go", size(func(c *Config) *int64 { return &c.PlayerMaxBytes })},
		{"memory-recording-max-bytes", "SLUICE_MEMORY_RECORDING_MAX_BYTES", "1GiB", "memory cap of each memory recording (bytes, or with KiB, MiB, GiB); past it the oldest GOPs go", size(func(c *Config) *int64 { return &c.MemoryRecordingMaxBytes })},
		{"metrics-token", "SLUICE_METRICS_TOKEN", "", "secret a Prometheus scrape of /metrics presents (bearer token or basic-auth password; empty: metrics off, /metrics answers 404)", str(func(c *Config) *string { return &c.MetricsToken })},
		{"metrics-addr", "SLUICE_METRICS_ADDR", "", "serve /metrics on this address (host:port) instead of the API port (empty: the API port; needs --metrics-token)", str(func(c *Config) *string { return &c.MetricsAddr })},
		{"webhook-retry-min", "SLUICE_WEBHOOK_RETRY_MIN", "1s", "wait after a webhook delivery's first failed attempt (duration); it doubles with each failure", dur(func(c *Config) *time.Duration { return &c.WebhookRetryMin })},
		{"webhook-retry-max", "SLUICE_WEBHOOK_RETRY_MAX", "10m", "longest wait between a webhook delivery's attempts (duration); deliveries are retried for 24h", dur(func(c *Config) *time.Duration { return &c.WebhookRetryMax })},
		{"event-stats-every", "SLUICE_EVENT_STATS_EVERY", "10s", "period of the event stream's server_stats event (duration, at least 1s)", dur(func(c *Config) *time.Duration { return &c.EventStatsEvery })},
		{"allow-local-files", "SLUICE_ALLOW_LOCAL_FILES", "false", "let INPUT_TYPE_OTHER read paths and file: URLs on this server", boolean(func(c *Config) *bool { return &c.AllowLocalFiles })},
	}, append(tlsSettings(), clusterSettings(dur, str, boolean)...)...)
}

// ParseConfig reads the defaults, then the environment, then the flags in args.
// It writes --help output to out and returns flag.ErrHelp when help was asked for.
func ParseConfig(name string, args []string, getenv func(string) string, out io.Writer) (Config, error) {
	var c Config
	all := settings()
	for _, s := range all {
		v := s.def
		if e := getenv(s.env); e != "" {
			v = e
		}
		if err := s.set(&c, v); err != nil {
			return c, fmt.Errorf("%s: %w", s.env, err)
		}
	}
	c.AdminPassword = getenv("SLUICE_ADMIN_PASSWORD")

	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	vals := make(map[string]*string, len(all))
	for _, s := range all {
		if boolSettings[s.name] {
			v := new(string)
			fs.Var(boolFlag{v}, s.name, "")
			vals[s.name] = v
			continue
		}
		vals[s.name] = fs.String(s.name, "", "")
	}
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: %s [serve|token|passwd|version] [flags]\n\nSettings (flag, environment variable, default):\n", name)
		for _, s := range all {
			def := s.def
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(out, "  --%-17s %-24s %s\n      default %s\n", s.name, s.env, s.help, def)
		}
		fmt.Fprintf(out, "  %-19s %-24s %s\n", "", "SLUICE_ADMIN_PASSWORD", "admin password set at first start (default: generated and printed once)")
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var ferr error
	fs.Visit(func(f *flag.Flag) {
		for _, s := range all {
			if s.name == f.Name && ferr == nil {
				if err := s.set(&c, *vals[s.name]); err != nil {
					ferr = fmt.Errorf("--%s: %w", s.name, err)
				}
			}
		}
	})
	if ferr != nil {
		return c, ferr
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	if c.Addr == "" {
		return errors.New("--addr: empty listen address")
	}
	if c.Data == "" {
		return errors.New("--data: empty data folder")
	}
	if c.Store != "" && !storage.IsPostgresURL(c.Store) {
		return errors.New("--store: want a postgres:// or postgresql:// URL (empty: the SQLite file in the data folder)")
	}
	if c.MetricsAddr != "" && c.MetricsToken == "" {
		return errors.New("--metrics-addr: metrics need --metrics-token (SLUICE_METRICS_TOKEN): without one they are off")
	}
	if c.ClusterLeaseTTL < 2*c.ClusterRenew {
		return fmt.Errorf("--cluster-lease-ttl: %s is shorter than twice --cluster-renew (%s)", c.ClusterLeaseTTL, c.ClusterRenew)
	}
	switch c.ClusterPlayback {
	case "":
		c.ClusterPlayback = cluster.ForwardRedirect
	case cluster.ForwardRedirect, cluster.ForwardProxy:
	default:
		return fmt.Errorf("--cluster-playback: %q is neither %s nor %s", c.ClusterPlayback, cluster.ForwardRedirect, cluster.ForwardProxy)
	}
	if len(c.ClusterNodeID) > 100 {
		return fmt.Errorf("--cluster-node-id: %d bytes, at most 100", len(c.ClusterNodeID))
	}
	if c.EventStatsEvery < minEventStatsEvery {
		return fmt.Errorf("--event-stats-every: %s is under the %s minimum", c.EventStatsEvery, minEventStatsEvery)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	switch strings.ToLower(c.LogFormat) {
	case "text", "":
		c.LogFormat = "text"
	case "json":
		c.LogFormat = "json"
	default:
		return fmt.Errorf("--log-format: unknown format %q (text, json)", c.LogFormat)
	}
	if c.MediaBind != "" {
		host := strings.TrimSuffix(strings.TrimPrefix(c.MediaBind, "["), "]")
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("--media-bind: %q is not an IP address (e.g. 127.0.0.1, 10.0.0.5, ::1; empty for every interface)", c.MediaBind)
		}
		c.MediaBind = ip.String()
	}
	if err := c.validateTLS(); err != nil {
		return err
	}
	abs, err := filepath.Abs(c.Data)
	if err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	c.Data = abs
	return nil
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown level %q (debug, info, warn, error)", s)
}

// NewLogger returns the server's logger at the configured level and format.
func (c *Config) NewLogger(w io.Writer) *slog.Logger {
	lvl, _ := parseLevel(c.LogLevel)
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// mediaAddr is the address a record's listener binds for port: MediaBind and the port.
func (c *Config) mediaAddr(port int) string {
	return net.JoinHostPort(c.MediaBind, strconv.Itoa(port))
}

// DBPath is the database file inside the data folder.
func (c *Config) DBPath() string { return filepath.Join(c.Data, "sluice.db") }

// StoreTarget is what storage.OpenTarget opens: the PostgreSQL URL of --store, else DBPath.
func (c *Config) StoreTarget() string {
	if c.Store != "" {
		return c.Store
	}
	return c.DBPath()
}

// RecordingsDir is the folder recordings are written to.
func (c *Config) RecordingsDir() string { return filepath.Join(c.Data, "recordings") }

// Getenv is os.Getenv, for ParseConfig.
func Getenv(k string) string { return os.Getenv(k) }

// parseSize reads a byte count: a whole number, optionally with KiB, MiB or GiB (or K, M, G,
// also powers of 1024), at least 1 MiB.
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/mult || n*mult < 1<<20 {
		return 0, fmt.Errorf("%q is not a size of at least 1MiB (e.g. 2GiB, 512MiB, 1073741824)", v)
	}
	return n * mult, nil
}
