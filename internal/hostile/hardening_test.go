package hostile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 13, items 6 to 8: token revocation, the store's files, a full disk, validation, paging.
const (
	// storeFileLimit is the file-size limit the store case runs the server with: about 40
	// record creates past what the store holds at start (its WAL grows about 22 KB a create).
	storeFileLimit = 1 << 20
	// maxFillCreates bounds the creates the store case makes before the limit must be hit.
	maxFillCreates = 400
	// newPassword is the admin's password after `sluice passwd`.
	newPassword = "another-horse-battery"
)

// recordingBody is an inactive file recording of the test stream: a record that runs nothing.
func recordingBody(name string) map[string]any {
	return map[string]any{"recording_name": name, "recording_type": "RECORDING_STREAM_TO_FILE", "active": false,
		"input": tinyTestVideo(), "output_format": "mp4"}
}

// apiError is an error answer's code and field.
type apiError struct {
	Error struct {
		Code, Field, Message string
	} `json:"error"`
}

// testStore: the store's files are private, validation gaps answer 400 with their field, and
// when the disk is full (here the process's file-size limit, which fails writes with EFBIG as a
// full disk fails them with ENOSPC) every create answers 507 INSUFFICIENT_STORAGE (it answered
// 500 INTERNAL before issue 13) while reads, paged lists and playback keep working.
func testStore(t *testing.T) {
	data := filepath.Join(t.TempDir(), "new")
	s := start(t, options{data: data, fileLimit: storeFileLimit})
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{"", 0o700}, {"sluice.db", 0o600}, {"sluice.db-wal", 0o600}, {"sluice.db-shm", 0o600}} {
		st, err := os.Stat(filepath.Join(data, f.name))
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
		} else if st.Mode().Perm() != f.mode {
			t.Errorf("%s in the data folder sluice created: mode %04o, want %04o", cmp.Or(f.name, "the folder"), st.Mode().Perm(), f.mode)
		}
	}
	p := s.rtmpPlayer("after-store")

	for _, v := range []string{"inf", "NaN", "-inf", "Infinity", "1e309"} {
		body := map[string]any{"restream_name": "fkf", "input": tinyTestVideo(),
			"transcoding": map[string]any{"video_transcoding": "libx264", "force_key_frames": v},
			"output":      map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": "udp://127.0.0.1:9"}}
		st, raw, err := s.post("/api/restream/create", body)
		var e apiError
		_ = json.Unmarshal(raw, &e)
		if err != nil || st != http.StatusBadRequest || e.Error.Code != "VALIDATION" || e.Error.Field != "transcoding.force_key_frames" {
			t.Errorf("force_key_frames %q: %d %s %v, want 400 VALIDATION on transcoding.force_key_frames", v, st, raw, err)
		}
	}

	w := s.watch()
	var names []string
	full := 0
	create := func(name string) bool {
		st, raw, err := s.post("/api/recording/create", recordingBody(name))
		var e apiError
		_ = json.Unmarshal(raw, &e)
		switch {
		case err != nil:
			t.Fatalf("create %s: %v", name, err)
		case st == http.StatusCreated && full == 0:
			names = append(names, name)
			return true
		case st == http.StatusInsufficientStorage && e.Error.Code == "INSUFFICIENT_STORAGE":
			full++
			return false
		}
		t.Fatalf("create %s with %d created: %d %s, want 201 or (once full) 507 INSUFFICIENT_STORAGE", name, len(names), st, raw)
		return false
	}
	for i := 0; i < maxFillCreates && create(fmt.Sprintf("fill-%03d", i)); i++ {
	}
	if full == 0 {
		w.stop()
		t.Fatalf("%d creates never filled the store under a %d KiB file-size limit", maxFillCreates, storeFileLimit>>10)
	}
	// Writes keep coming against the full store: each answers 507 at once.
	i := 0
	repeat(quickAttack, func() {
		create(fmt.Sprintf("more-%04d", i))
		i++
	})
	// Reads still work, paged in the store.
	var page []map[string]any
	s.call("/api/recording/getAll", map[string]any{"limit": 5, "skip": 2, "sort": map[string]any{"created": 1}}, http.StatusOK, &page)
	var count struct {
		Count int `json:"count"`
	}
	s.call("/api/recording/getCount", nil, http.StatusOK, &count)
	f := w.stop()
	t.Logf("%d recordings created, then %d creates answered 507 INSUFFICIENT_STORAGE (file-size limit %d KiB)", len(names), full, storeFileLimit>>10)
	if count.Count != len(names) {
		t.Errorf("getCount %d after %d creates and the 507s, want %d", count.Count, len(names), len(names))
	}
	if len(page) != 5 || len(names) < 7 {
		t.Errorf("getAll limit 5 skip 2: %d records of %d", len(page), len(names))
	} else {
		for i, r := range page {
			if r["recording_name"] != names[2+i] {
				t.Errorf("getAll limit 5 skip 2: record %d is %v, want %s", i, r["recording_name"], names[2+i])
			}
		}
	}
	f.check(t, s, quickBound)
	p.prove(t)
}

// loginAs logs in from 127.0.0.1 and returns the status and the token.
func (s *server) loginAs(password string) (int, string) {
	s.t.Helper()
	st, raw, err := s.request("/api/auth/login", map[string]any{"email": "admin", "password": password}, "")
	if err != nil {
		s.t.Fatal(err)
	}
	var l struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(raw, &l)
	return st, l.Token
}

// testTokens: `sluice passwd`, run while the server runs, revokes every token issued before
// it (before issue 13 they stayed valid until they expired); a stolen token then gets 401
// however often it is tried, and POST /api/auth/logoutAll revokes every token too. The server
// warns at start that its existing data folder is open to other users.
func testTokens(t *testing.T) {
	s := start(t, options{})
	if warn := s.logged("open to other users"); len(warn) == 0 {
		t.Errorf("no warning at start about the data folder open to other users (mode 0755)")
	}
	p := s.rtmpPlayer("after-tokens")
	st, stolen := s.loginAs(adminPassword)
	if st != http.StatusOK {
		t.Fatalf("second login: %d", st)
	}
	first := s.token

	cmd := exec.Command(sluiceBin, "passwd", "--data", s.data)
	cmd.Env = append(os.Environ(), "SLUICE_NEW_PASSWORD="+newPassword)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sluice passwd: %v: %s", err, out)
	}
	for name, tok := range map[string]string{"the first token": first, "the stolen token": stolen} {
		if code, raw, _ := s.request("/api/vod/getAll", nil, tok); code != http.StatusUnauthorized {
			t.Errorf("%s after sluice passwd: %d %s, want 401", name, code, raw)
		}
	}
	if code, _ := s.loginAs(adminPassword); code != http.StatusUnauthorized {
		t.Errorf("the old password after sluice passwd: %d, want 401", code)
	}
	code, tok := s.loginAs(newPassword)
	if code != http.StatusOK {
		t.Fatalf("the new password: %d", code)
	}
	s.token = tok

	// The attacker keeps trying the revoked tokens from another address, 8 at a time.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.4.1")}}).DialContext}}
	w := s.watch()
	var tries, wrong int
	var mu sync.Mutex
	repeat(quickAttack, func() {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, s.base+"/api/vod/getAll", strings.NewReader("{}"))
				req.Header.Set("x-access-token", []string{first, stolen}[i%2])
				resp, err := client.Do(req)
				mu.Lock()
				defer mu.Unlock()
				tries++
				if err != nil {
					wrong++
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					wrong++
				}
			})
		}
		wg.Wait()
	})
	f := w.stop()
	t.Logf("%d requests with the revoked tokens, %d not answered 401", tries, wrong)
	if wrong > 0 {
		t.Errorf("%d of %d requests with revoked tokens were not answered 401", wrong, tries)
	}
	f.check(t, s, quickBound)

	s.call("/api/auth/logoutAll", nil, http.StatusOK, nil)
	if code, raw, _ := s.request("/api/vod/getAll", nil, tok); code != http.StatusUnauthorized {
		t.Errorf("a token after logoutAll: %d %s, want 401", code, raw)
	}
	if code, s.token = s.loginAs(newPassword); code != http.StatusOK {
		t.Fatalf("login after logoutAll: %d", code)
	}
	p.prove(t)
}
