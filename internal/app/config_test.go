package app

import (
	"errors"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/api"
)

// envOf is a getenv that knows the variables of env only.
func envOf(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestConfigPrecedence(t *testing.T) {
	getenv := envOf(map[string]string{"SLUICE_ADDR": ":9000", "SLUICE_DATA": "/tmp/x", "SLUICE_TOKEN_TTL": "1h", "SLUICE_ADMIN_PASSWORD": "pw-from-env"})

	c, err := ParseConfig("sluice", nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	wantData, _ := filepath.Abs("./data")
	if c.Addr != ":8080" || c.Data != wantData || c.TokenTTL != 30*24*time.Hour || c.ShutdownTimeout != 10*time.Second || c.FFmpeg != "ffmpeg" || c.FFmpegNice != 19 ||
		c.EventStatsEvery != 10*time.Second {
		t.Fatalf("defaults: %+v", c)
	}

	c, err = ParseConfig("sluice", nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":9000" || c.Data != "/tmp/x" || c.TokenTTL != time.Hour || c.AdminPassword != "pw-from-env" {
		t.Fatalf("environment: %+v", c)
	}

	c, err = ParseConfig("sluice", []string{"--addr", "127.0.0.1:7000", "--token-ttl", "2h", "--ffmpeg-nice", "0", "--event-stats-every", "1s"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:7000" || c.TokenTTL != 2*time.Hour || c.Data != "/tmp/x" || c.FFmpegNice != 0 || c.EventStatsEvery != time.Second {
		t.Fatalf("flags over environment: %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	none := func(string) string { return "" }
	for _, args := range [][]string{
		{"--token-ttl", "soon"},
		{"--token-ttl", "-1h"},
		{"--log-level", "loud"},
		{"--log-format", "xml"},
		{"--ffmpeg-nice", "20"},
		{"--ffmpeg-nice", "-1"},
		{"--ffmpeg-nice", "low"},
		{"--event-stats-every", "500ms"},
		{"--event-stats-every", "0s"},
		{"--cluster-playback", "forward"},
		{"--cluster-playback", "Proxy"},
		{"--nope"},
		{"stray"},
	} {
		if _, err := ParseConfig("sluice", args, none, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if _, err := ParseConfig("sluice", nil, envOf(map[string]string{"SLUICE_SHUTDOWN_TIMEOUT": "x"}), io.Discard); err == nil {
		t.Error("bad SLUICE_SHUTDOWN_TIMEOUT accepted")
	}
	if _, err := ParseConfig("sluice", []string{"--help"}, none, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
}

// TestConfigMediaBind: --media-bind takes an IP address (IPv6 with or without brackets), or
// nothing for every interface; a listener's address joins it with the port.
func TestConfigMediaBind(t *testing.T) {
	none := func(string) string { return "" }
	for _, c := range []struct{ in, bind, addr string }{
		{"", "", ":8554"},
		{"127.0.0.2", "127.0.0.2", "127.0.0.2:8554"},
		{"::1", "::1", "[::1]:8554"},
		{"[::1]", "::1", "[::1]:8554"},
		{"0.0.0.0", "0.0.0.0", "0.0.0.0:8554"},
	} {
		cfg, err := ParseConfig("sluice", []string{"--media-bind", c.in}, none, io.Discard)
		if err != nil {
			t.Errorf("--media-bind %q: %v", c.in, err)
			continue
		}
		if cfg.MediaBind != c.bind || cfg.mediaAddr(8554) != c.addr {
			t.Errorf("--media-bind %q: bind %q, address %q; want %q, %q", c.in, cfg.MediaBind, cfg.mediaAddr(8554), c.bind, c.addr)
		}
	}
	for _, bad := range []string{"localhost", "127.0.0.1:80", "300.1.1.1", "eth0"} {
		if _, err := ParseConfig("sluice", []string{"--media-bind", bad}, none, io.Discard); err == nil {
			t.Errorf("--media-bind %q accepted", bad)
		}
	}
	cfg, err := ParseConfig("sluice", nil, envOf(map[string]string{"SLUICE_MEDIA_BIND": "10.1.2.3"}), io.Discard)
	if err != nil || cfg.MediaBind != "10.1.2.3" {
		t.Errorf("SLUICE_MEDIA_BIND: %q %v", cfg.MediaBind, err)
	}
}

func TestConfigInputOther(t *testing.T) {
	none := func(string) string { return "" }
	c, err := ParseConfig("sluice", nil, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.AllowLocalFiles || strings.Join(c.InputSchemes, ",") != strings.Join(api.DefaultInputSchemes, ",") {
		t.Fatalf("defaults: local %v, schemes %v", c.AllowLocalFiles, c.InputSchemes)
	}
	c, err = ParseConfig("sluice", []string{"--allow-local-files", "--input-schemes", " HTTP, srt,,ftp "}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.AllowLocalFiles || strings.Join(c.InputSchemes, ",") != "http,srt,ftp" {
		t.Fatalf("flags: local %v, schemes %v", c.AllowLocalFiles, c.InputSchemes)
	}
	env := envOf(map[string]string{"SLUICE_ALLOW_LOCAL_FILES": "true", "SLUICE_INPUT_SCHEMES": "rtmp"})
	c, err = ParseConfig("sluice", []string{"--allow-local-files=false"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.AllowLocalFiles || strings.Join(c.InputSchemes, ",") != "rtmp" {
		t.Fatalf("environment and flag: local %v, schemes %v", c.AllowLocalFiles, c.InputSchemes)
	}
	c, err = ParseConfig("sluice", []string{"--input-schemes", ""}, none, io.Discard)
	if err != nil || c.InputSchemes == nil || len(c.InputSchemes) != 0 {
		t.Fatalf("empty list: %v %v", c.InputSchemes, err)
	}
	for _, args := range [][]string{{"--input-schemes", "http,file"}, {"--input-schemes", "pipe"}, {"--input-schemes", "crypto+file"},
		{"--input-schemes", "http:"}, {"--allow-local-files=maybe"}} {
		if _, err := ParseConfig("sluice", args, none, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestConfigMemoryCaps: the players' and memory recordings' byte caps default to the packages'
// defaults, take sizes with units from flags and the environment, and refuse nonsense.
func TestConfigMemoryCaps(t *testing.T) {
	none := func(string) string { return "" }
	c, err := ParseConfig("sluice", nil, none, io.Discard)
	if err != nil || c.PlayerMaxBytes != 2<<30 || c.MemoryRecordingMaxBytes != 1<<30 {
		t.Fatalf("defaults: %d %d %v", c.PlayerMaxBytes, c.MemoryRecordingMaxBytes, err)
	}
	env := envOf(map[string]string{"SLUICE_MEMORY_RECORDING_MAX_BYTES": "512MiB"})
	c, err = ParseConfig("sluice", []string{"--player-max-bytes", "8G"}, env, io.Discard)
	if err != nil || c.PlayerMaxBytes != 8<<30 || c.MemoryRecordingMaxBytes != 512<<20 {
		t.Fatalf("set: %d %d %v", c.PlayerMaxBytes, c.MemoryRecordingMaxBytes, err)
	}
	c, err = ParseConfig("sluice", []string{"--player-max-bytes", "1073741824"}, none, io.Discard)
	if err != nil || c.PlayerMaxBytes != 1<<30 {
		t.Fatalf("plain bytes: %d %v", c.PlayerMaxBytes, err)
	}
	for _, v := range []string{"0", "-1GiB", "1KiB", "lots", "2TB", "9999999999G"} {
		if _, err := ParseConfig("sluice", []string{"--player-max-bytes", v}, none, io.Discard); err == nil {
			t.Errorf("--player-max-bytes %q accepted", v)
		}
	}
}

// TestConfigClusterPlayback: --cluster-playback is redirect by default, and proxy when asked.
func TestConfigClusterPlayback(t *testing.T) {
	none := func(string) string { return "" }
	c, err := ParseConfig("sluice", nil, none, io.Discard)
	if err != nil || c.ClusterPlayback != "redirect" {
		t.Errorf("default: %q, %v", c.ClusterPlayback, err)
	}
	c, err = ParseConfig("sluice", nil, envOf(map[string]string{"SLUICE_CLUSTER_PLAYBACK": "proxy"}), io.Discard)
	if err != nil || c.ClusterPlayback != "proxy" {
		t.Errorf("SLUICE_CLUSTER_PLAYBACK=proxy: %q, %v", c.ClusterPlayback, err)
	}
}
