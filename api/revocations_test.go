package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// TestAuthenticationReadsNoStore: authenticated requests read nothing from the store while it
// is unchanged: the revocation state and the known users are in memory (issue 13: every request
// read the store three times and waited for its read connections).
func TestAuthenticationReadsNoStore(t *testing.T) {
	e := newEnv(t)
	e.post("/api/vod/getAll", nil) // the first request loads the state
	before := map[string]int{}
	for _, name := range []string{"AuthRevision", "Revocations", "UserByID"} {
		before[name] = e.store.readCount(name)
	}
	for range 50 {
		if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
			t.Fatalf("getAll: %d %s", res.code, res.raw)
		}
	}
	for name, n := range before {
		if got := e.store.readCount(name) - n; got != 0 {
			t.Errorf("50 requests on an unchanged store read %s %d times, want 0", name, got)
		}
	}
	// Past the recheck interval one request reads the revision; nothing changed, so only that.
	e.advance(DefaultRevocationRecheck)
	for range 5 {
		e.post("/api/vod/getAll", nil)
	}
	if got := e.store.readCount("AuthRevision") - before["AuthRevision"]; got != 1 {
		t.Errorf("after the recheck interval: %d revision reads, want 1", got)
	}
	if got := e.store.readCount("Revocations") - before["Revocations"]; got != 0 {
		t.Errorf("after the recheck interval with no change: %d state reads, want 0", got)
	}
}

// TestOwnRevocationsApplyAtOnce: logout and logoutAll take effect at the next request even when
// the store's revocation stamp cannot show the change and the recheck interval has not passed: this
// process applies its own revocations to the state in memory.
func TestOwnRevocationsApplyAtOnce(t *testing.T) {
	e := newEnv(t)
	second := login(t, e, adminPassword).obj()["token"].(string)
	e.post("/api/vod/getAll", nil)
	e.store.mu.Lock()
	e.store.stampFrozen = true
	e.store.mu.Unlock()

	wantSuccess(t, e.post("/api/auth/logout", nil))
	wantErr(t, e.post("/api/vod/getAll", nil), http.StatusUnauthorized, CodeUnauthorized, "")
	if res := e.post("/api/vod/getAll", nil, withHeader("x-access-token", second)); res.code != http.StatusOK {
		t.Fatalf("the other token after logout: %d %s", res.code, res.raw)
	}
	e.advance(time.Millisecond)
	third := login(t, e, adminPassword).obj()["token"].(string)
	wantSuccess(t, e.post("/api/auth/logoutAll", nil, withHeader("x-access-token", third)))
	for _, tok := range []string{second, third} {
		wantErr(t, e.post("/api/vod/getAll", nil, withHeader("x-access-token", tok)), http.StatusUnauthorized, CodeUnauthorized, "")
	}
	fresh := login(t, e, adminPassword).obj()["token"].(string)
	if res := e.post("/api/vod/getAll", nil, withHeader("x-access-token", fresh)); res.code != http.StatusOK {
		t.Fatalf("a token issued after logoutAll: %d %s", res.code, res.raw)
	}
}

// TestOtherWritersRevocationWithinRecheck: a revocation written past this server (as `sluice
// passwd` does from another process) takes effect at the next request when the store's write
// stamp shows it, and within the recheck interval when the stamp cannot.
func TestOtherWritersRevocationWithinRecheck(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.post("/api/vod/getAll", nil)
	if _, err := revokeTokens(ctx, e.store, mustClaims(t, e, e.token).UserID, e.clock()); err != nil {
		t.Fatal(err)
	}
	wantErr(t, e.post("/api/vod/getAll", nil), http.StatusUnauthorized, CodeUnauthorized, "")

	// With a stamp that does not move, the recheck interval bounds the delay.
	e.advance(time.Millisecond)
	e.token = login(t, e, adminPassword).obj()["token"].(string)
	e.post("/api/vod/getAll", nil)
	e.store.mu.Lock()
	e.store.stampFrozen = true
	e.store.mu.Unlock()
	if _, err := revokeTokens(ctx, e.store, mustClaims(t, e, e.token).UserID, e.clock()); err != nil {
		t.Fatal(err)
	}
	e.advance(DefaultRevocationRecheck)
	wantErr(t, e.post("/api/vod/getAll", nil), http.StatusUnauthorized, CodeUnauthorized, "")
}

// TestRevocationReadFailureRefuses: when the store cannot tell the revocation state, a request
// that needs it is answered with an error, never let through on stale state.
func TestRevocationReadFailureRefuses(t *testing.T) {
	e := newEnv(t)
	e.post("/api/vod/getAll", nil)
	e.store.mu.Lock()
	e.store.failRevision = errors.New("disk I/O error")
	e.store.mu.Unlock()
	e.advance(DefaultRevocationRecheck)
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusInternalServerError {
		t.Fatalf("with the store failing: %d %s, want 500", res.code, res.raw)
	}
	e.store.mu.Lock()
	e.store.failRevision = nil
	e.store.mu.Unlock()
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
		t.Fatalf("after the store recovered: %d %s", res.code, res.raw)
	}
}

// TestPasswdThroughSecondStoreHandle: SetPassword on a second handle of the same SQLite file
// (what `sluice passwd` run while the server runs is) refuses the server's earlier tokens at
// its next request, through the store's revocation stamp; logout on the server refuses the token at
// once too.
func TestPasswdThroughSecondStoreHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sluice.db")
	open := func() *storage.Store {
		st, err := storage.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	st, other := open(), open()
	ctx := context.Background()
	bootstrap(t, st)
	procs := newFakeProcs()
	// A recheck interval far longer than the test: only the revocation stamp can tell the change.
	h, err := New(Config{Store: st, Procs: procs, RevocationRecheck: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, h: h, procs: procs}
	e.token = login(t, e, adminPassword).obj()["token"].(string)
	kept := login(t, e, adminPassword).obj()["token"].(string)
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
		t.Fatalf("getAll: %d %s", res.code, res.raw)
	}
	wantSuccess(t, e.post("/api/auth/logout", nil))
	wantErr(t, e.post("/api/vod/getAll", nil), http.StatusUnauthorized, CodeUnauthorized, "")

	e.token = login(t, e, adminPassword).obj()["token"].(string)
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
		t.Fatalf("getAll: %d %s", res.code, res.raw)
	}
	if err := SetPassword(ctx, other, AdminUser, "a new password"); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{e.token, kept} {
		wantErr(t, e.post("/api/vod/getAll", nil, withHeader("x-access-token", tok)), http.StatusUnauthorized, CodeUnauthorized, "")
	}
	e.token = login(t, e, "a new password").obj()["token"].(string)
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
		t.Fatalf("the new password's token: %d %s", res.code, res.raw)
	}
}

// TestStaleRequestsShareARefresh: while revocations are committed all the time (every stamp
// differs), requests that find the state stale together share a refresh instead of each reading
// the revision in turn behind the others (a first version, whose stamp moved with every write
// to the store, had 80 start and remove requests queue so).
func TestStaleRequestsShareARefresh(t *testing.T) {
	const racers = 20
	e := newEnv(t)
	e.post("/api/vod/getAll", nil)
	gate := make(chan struct{})
	e.store.mu.Lock()
	e.store.stampMoving, e.store.revisionGate = true, gate
	base, reads := e.store.stampReads, e.store.readCount
	e.store.mu.Unlock()
	before := reads("AuthRevision")
	codes := make(chan int, racers)
	var wg sync.WaitGroup
	for range racers {
		wg.Go(func() { codes <- e.post("/api/vod/getAll", nil).code })
	}
	// Every request has looked at the stamp (the first refresh reads it a second time) before
	// the first refresh may end.
	for {
		e.store.mu.Lock()
		n := e.store.stampReads - base
		e.store.mu.Unlock()
		if n >= racers+1 {
			break
		}
		runtime.Gosched()
	}
	close(gate)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Fatalf("a request answered %d", c)
		}
	}
	if got := reads("AuthRevision") - before; got > racers/2 {
		t.Errorf("%d concurrent stale requests read the revision %d times, want them to share a few reads", racers, got)
	}
}
