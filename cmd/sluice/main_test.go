package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds sluice as `make build` does.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sluice")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func login(t *testing.T, base, password string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": "admin", "password": password})
	resp, err := http.Post(base+"/api/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Token string }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Token
}

func authedStatus(t *testing.T, base, path, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, nil)
	req.Header.Set("x-access-token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeAsANewcomer starts the binary with a fresh data folder, reads the generated admin
// password and the API address it prints, logs in, uses `sluice token` and `sluice passwd`,
// and stops it with SIGTERM.
func TestServeAsANewcomer(t *testing.T) {
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	env := append(os.Environ(), "SLUICE_ADDR=127.0.0.1:0", "SLUICE_DATA="+data, "SLUICE_ADMIN_PASSWORD=")
	cmd := exec.Command(bin)
	cmd.Env = env
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	var password, base string
	lines := bufio.NewScanner(stdout)
	pwRe := regexp.MustCompile(`admin password .*: (\S+)$`)
	addrRe := regexp.MustCompile(`API at (http://\S+)`)
	for base == "" && lines.Scan() {
		if m := pwRe.FindStringSubmatch(lines.Text()); m != nil {
			password = m[1]
		}
		if m := addrRe.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if password == "" || base == "" {
		t.Fatalf("did not print the admin password (%q) and the API address (%q)", password, base)
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", err, resp)
	}
	resp.Body.Close()
	code, loginTok := login(t, base, password)
	if code != http.StatusOK || loginTok == "" {
		t.Fatalf("login with the printed password: %d", code)
	}
	// The folder sluice created and the store that holds the token secret and the password
	// hashes are the server user's alone.
	wantMode(t, data, 0o700)
	for _, f := range []string{"sluice.db", "sluice.db-wal", "sluice.db-shm"} {
		wantMode(t, filepath.Join(data, f), 0o600)
	}

	// sluice token prints a token the running server accepts.
	tokCmd := exec.Command(bin, "token")
	tokCmd.Env = env
	out, err := tokCmd.Output()
	if err != nil {
		t.Fatalf("sluice token: %v", err)
	}
	cliTok := strings.TrimSpace(string(out))
	if code := authedStatus(t, base, "/api/vod/getAll", cliTok); code != http.StatusOK {
		t.Fatalf("token from `sluice token` answered %d", code)
	}

	// sluice passwd changes the password: the old one stops working, and so does every token
	// issued before, which the running server refuses at once.
	pw := exec.Command(bin, "passwd")
	pw.Env = env
	pw.Stdin = strings.NewReader("a-new-password-42\n")
	if out, err := pw.CombinedOutput(); err != nil {
		t.Fatalf("sluice passwd: %v\n%s", err, out)
	}
	if code, _ := login(t, base, password); code != http.StatusUnauthorized {
		t.Fatalf("old password after passwd: %d, want 401", code)
	}
	for name, tok := range map[string]string{"login": loginTok, "sluice token": cliTok} {
		if code := authedStatus(t, base, "/api/vod/getAll", tok); code != http.StatusUnauthorized {
			t.Fatalf("%s token issued before passwd answered %d, want 401", name, code)
		}
	}
	code, newTok := login(t, base, "a-new-password-42")
	if code != http.StatusOK {
		t.Fatalf("new password: %d, want 200", code)
	}
	if code := authedStatus(t, base, "/api/vod/getAll", newTok); code != http.StatusOK {
		t.Fatalf("token issued after passwd answered %d", code)
	}

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
		t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after SIGTERM")
	}
}

func TestHelpListsEverySetting(t *testing.T) {
	bin := buildBinary(t)
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"--addr", "SLUICE_ADDR", ":8080", "--data", "SLUICE_DATA", "./data", "--ffmpeg", "SLUICE_FFMPEG", "--public-url", "SLUICE_PUBLIC_URL", "SLUICE_ADMIN_PASSWORD", "--token-ttl", "720h",
		"--input-schemes", "SLUICE_INPUT_SCHEMES", "http,https,rtmp", "--allow-local-files", "SLUICE_ALLOW_LOCAL_FILES"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--help does not mention %q:\n%s", want, out)
		}
	}
	out, err = exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "sluice ") {
		t.Fatalf("version: %v %q", err, out)
	}
	if err := exec.Command(bin, "frobnicate").Run(); err == nil {
		t.Fatal("an unknown command exited 0")
	}
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s is %04o, want %04o", filepath.Base(path), got, want)
	}
}

// TestWarnsAboutAnExposedStore starts the server on a data folder and store others can read: the
// store is narrowed to 0600 and both exposures are logged at start.
func TestWarnsAboutAnExposedStore(t *testing.T) {
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(data, "sluice.db")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for p, m := range map[string]os.FileMode{data: 0o755, db: 0o644} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(t.TempDir(), "stderr")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "SLUICE_ADDR=127.0.0.1:0", "SLUICE_DATA="+data, "SLUICE_ADMIN_PASSWORD=a-good-password")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.Contains(lines.Text(), "API at") {
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"level=WARN", "is open to other users (mode 0755)", "sluice.db was readable by other users (mode 0644)"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	wantMode(t, db, 0o600)
	wantMode(t, data, 0o755) // an existing folder is the operator's: warned about, not changed
}
