// Package app is sluice's composition root: configuration, wiring, boot and shutdown.
package app

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/storage"
)

// Version is set at build time with -ldflags "-X github.com/sluicemedia/sluice/internal/app.Version=...".
var Version = "dev"

// Main runs the command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serveCmd(args, stdout, stderr)
	case "token":
		err = tokenCmd(args, stdout, stderr)
	case "passwd":
		err = passwdCmd(args, stdin, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "sluice %s\n", Version)
	case "help":
		_, err = ParseConfig("sluice", []string{"--help"}, Getenv, stdout)
	default:
		err = fmt.Errorf("unknown command %q (serve, token, passwd, version, help)", cmd)
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	default:
		fmt.Fprintf(stderr, "sluice %s: %v\n", cmd, err)
		return 1
	}
}

func serveCmd(args []string, stdout, stderr io.Writer) error {
	cfg, err := ParseConfig("sluice", args, Getenv, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return Run(ctx, cfg, Options{Stdout: stdout, Logger: cfg.NewLogger(stderr)})
}

// openStore opens the store, the PostgreSQL database of --store or the SQLite file in the data
// folder, creating the folder private (0700) when missing (it holds the recordings either way).
func openStore(cfg Config) (*storage.Store, error) {
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("data folder %s: %w", cfg.Data, err)
	}
	st, err := storage.OpenTarget(cfg.StoreTarget())
	if err != nil {
		// The error names the store (a PostgreSQL URL without its password).
		return nil, fmt.Errorf("open store: %w", err)
	}
	return st, nil
}

// tokenCmd prints a fresh admin token, for scripts: TOKEN=$(sluice token).
func tokenCmd(args []string, stdout, stderr io.Writer) error {
	cfg, err := ParseConfig("sluice token", args, Getenv, stderr)
	if err != nil {
		return err
	}
	st, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := api.Bootstrap(ctx, st, cfg.AdminPassword); err != nil {
		return err
	}
	tok, err := api.IssueToken(ctx, st, "admin", cfg.TokenTTL)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// passwdCmd sets the admin password from SLUICE_NEW_PASSWORD or the first line of stdin.
func passwdCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := ParseConfig("sluice passwd", args, Getenv, stderr)
	if err != nil {
		return err
	}
	pw := Getenv("SLUICE_NEW_PASSWORD")
	if pw == "" {
		fmt.Fprintln(stderr, "new admin password (one line):")
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && line == "" {
			return fmt.Errorf("read password: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	if len(pw) < 8 {
		return errors.New("the password must have at least 8 characters")
	}
	st, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := api.Bootstrap(ctx, st, pw); err != nil {
		return err
	}
	if err := api.SetPassword(ctx, st, "admin", pw); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "admin password changed")
	return nil
}
