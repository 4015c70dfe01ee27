// Package pgtest runs a throwaway PostgreSQL server for tests: a cluster made by initdb in a
// temporary folder, started on a free loopback port, one fresh database per test, stopped and
// removed at the end. Start it once per test binary (TestMain) and hand out databases with
// NewDatabase.
//
// It needs Debian's postgresql package (scripts/ensure-test-deps.sh installs it). PostgreSQL
// refuses to run as root: as root, the cluster is made and run as the package's "postgres" user
// (the temporary folder is handed to it, so TMPDIR must be a folder that user can reach, as
// /tmp is); otherwise as the current user.
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Bounds of the cluster's life.
const (
	// startTimeout bounds initdb and the server's start.
	startTimeout = 60 * time.Second
	// stopTimeout is how long Stop waits for a fast shutdown before it kills the server.
	stopTimeout = 10 * time.Second
	// superuser is the cluster's superuser; it connects without a password (trust, loopback only).
	superuser = "sluice"
	// maxConnections is the server's connection limit: tests run stores of several connections
	// each, several at once.
	maxConnections = 300
	// startAttempts is how often Start tries another port when the one it picked was taken.
	startAttempts = 3
)

// Test ports come from below the kernel's ephemeral range (as testutil.FreePort's), so that no
// outgoing connection takes the one picked before the server binds it.
const (
	portLow  = 20000
	portHigh = 32767
)

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	dir   string
	port  int
	cmd   *exec.Cmd
	done  chan struct{} // closed when the server process has ended
	log   *bytes.Buffer // the server's output
	admin *sql.DB
	n     atomic.Int64 // databases made
}

// Start makes a cluster in a new temporary folder and starts its server on a free loopback port.
// Call Stop when done (it removes the folder).
func Start(ctx context.Context) (*Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, owner, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sluice-pgtest-*")
	if err != nil {
		return nil, fmt.Errorf("pgtest: temporary folder: %w", err)
	}
	c := &Cluster{dir: dir}
	if owner != nil {
		if err := os.Chown(dir, int(owner.uid), int(owner.gid)); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: hand %s to user %s: %w", dir, owner.name, err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", superuser,
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = sysProcAttr(cred)
	if out, err := initdb.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb in %s: %w\n%s", data, err, out)
	}
	for attempt := 1; ; attempt++ {
		err = c.serve(ctx, bin, data, cred)
		if err == nil {
			return c, nil
		}
		if attempt == startAttempts || !strings.Contains(c.log.String(), "could not bind") {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
}

// serve starts the server on a free port and waits until it answers.
func (c *Cluster) serve(ctx context.Context, bin, data string, cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.port = port
	c.log = &bytes.Buffer{}
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=",
		"-c", "max_connections="+strconv.Itoa(maxConnections),
		"-c", "shared_buffers=32MB",
		// A test's data need not outlive a crash: no waiting for the disk.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.cmd.SysProcAttr = sysProcAttr(cred)
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	c.done = make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		close(c.done)
	}()
	c.admin, err = sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		c.kill()
		return fmt.Errorf("pgtest: %w", err)
	}
	c.admin.SetMaxOpenConns(2)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err = c.admin.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-c.done:
			_ = c.admin.Close()
			return fmt.Errorf("pgtest: postgres on port %d ended at start:\n%s", port, c.log.String())
		case <-ctx.Done():
			_ = c.admin.Close()
			c.kill()
			return fmt.Errorf("pgtest: postgres on port %d did not answer within %v: %w\n%s",
				port, startTimeout, err, c.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the connection URL of database db of the cluster.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", superuser, c.port, db)
}

// Port is the server's loopback port.
func (c *Cluster) Port() int { return c.port }

// CreateDatabase makes a new empty database and returns its URL and a function that drops it
// (ending its connections).
func (c *Cluster) CreateDatabase(ctx context.Context) (string, func() error, error) {
	name := fmt.Sprintf("t%d_%d", c.n.Add(1), rand.IntN(1e9))
	if _, err := c.admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.admin.ExecContext(ctx, `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			return fmt.Errorf("pgtest: drop database %s: %w", name, err)
		}
		return nil
	}
	return c.URL(name), drop, nil
}

// NewDatabase makes a new empty database for t, dropped when t ends, and returns its URL.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url, drop, err := c.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return url
}

// Stop shuts the server down (fast shutdown, then a kill after stopTimeout) and removes the
// cluster's folder.
func (c *Cluster) Stop() error {
	var errs []error
	if c.admin != nil {
		errs = append(errs, c.admin.Close())
	}
	if c.cmd != nil && c.cmd.Process != nil {
		// SIGINT is PostgreSQL's fast shutdown: sessions end, the server stops at once.
		_ = c.cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.done:
		case <-time.After(stopTimeout):
			c.kill()
			errs = append(errs, fmt.Errorf("pgtest: postgres did not stop within %v; killed", stopTimeout))
		}
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

// kill ends the server process at once and waits for it.
func (c *Cluster) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

// binDir finds PostgreSQL's server programs: initdb on PATH, else Debian's newest
// /usr/lib/postgresql/<version>/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	if len(found) == 0 {
		return "", errors.New("pgtest: PostgreSQL's initdb not found (on PATH or in /usr/lib/postgresql/*/bin): " +
			"install Debian's postgresql package (scripts/ensure-test-deps.sh)")
	}
	return filepath.Dir(found[0]), nil
}

// version is the major version in a /usr/lib/postgresql/<version>/bin/initdb path.
func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// account is the user the cluster runs as when the tests run as root.
type account struct {
	name     string
	uid, gid uint32
}

// runAs returns the credential to run PostgreSQL's programs with, and its account: nil when
// the process is not root (the programs run as the current user).
func runAs() (*syscall.Credential, *account, error) {
	if os.Geteuid() != 0 {
		return nil, nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, nil, fmt.Errorf("pgtest: PostgreSQL cannot run as root and user postgres is missing "+
			"(Debian's postgresql package makes it): %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, nil, fmt.Errorf("pgtest: user postgres: %w", err)
	}
	a := &account{name: u.Username, uid: uint32(uid), gid: uint32(gid)}
	return &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: []uint32{}}, a, nil
}

// freePort returns a loopback TCP port that is free now.
func freePort() (int, error) {
	for range 1000 {
		p := portLow + rand.IntN(portHigh-portLow+1)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		_ = l.Close()
		return p, nil
	}
	return 0, errors.New("pgtest: no free loopback port")
}
