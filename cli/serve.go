package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/server"
)

// listFlag collects a repeated string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// serveConfig is what "lore serve" was asked to do.
type serveConfig struct {
	addr, home, tokens string
	insecure           bool
	memLimit           int64
	allowPaths         []string
	shutdownTimeout    time.Duration
}

// runServe is "lore serve": the HTTP API over an engine until SIGTERM or SIGINT (or
// ctx ends); SIGHUP reloads the tokens file.
func runServe(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "serve", "[flags]")
	var c serveConfig
	var allow listFlag
	fs.StringVar(&c.addr, "addr", "127.0.0.1:7474", "`host:port` to listen on; beyond loopback needs --insecure (no TLS yet)")
	fs.StringVar(&c.home, "home", "", "Lore's home `dir` (default $LORE_HOME, else ./.lore)")
	fs.StringVar(&c.tokens, "tokens", "", "the tokens `file` (default HOME/tokens; created with a new admin token when missing)")
	fs.BoolVar(&c.insecure, "insecure", false, "allow listening beyond loopback without TLS: tokens then cross the network in clear")
	fs.Var(&allow, "allow-path", "a location `prefix` readers may read by path (repeatable; default none)")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long running statements may take to finish on shutdown before they are canceled")
	memLimit := addMemoryLimit(fs)
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return usageError(e, fs, "unexpected argument %q", fs.Arg(0))
	}
	c.home, c.memLimit, c.allowPaths = homeDir(c.home), int64(*memLimit), allow
	if c.tokens == "" {
		c.tokens = filepath.Join(c.home, "tokens")
	}
	if !c.insecure && !loopback(c.addr) {
		fmt.Fprintf(e.stderr, "lore serve: refusing to listen on %s beyond loopback without TLS (TLS is not built yet); pass --insecure to do it anyway\n", c.addr)
		return exitUsage
	}
	sigs, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := serve(sigs, e, c); err != nil {
		fmt.Fprintf(e.stderr, "lore serve: %v\n", err)
		return exitError
	}
	return exitOK
}

// loopback reports whether addr's host is a loopback name or address. An empty host
// listens everywhere.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func serve(ctx context.Context, e *env, c serveConfig) error {
	logger := slog.New(slog.NewJSONHandler(e.stderr, nil))
	tokens, err := openTokens(e, c.tokens)
	if err != nil {
		return err
	}
	eng, err := lore.Open(ctx, lore.Options{Home: c.home, MemoryLimit: c.memLimit, AllowPaths: c.allowPaths, Logger: logger})
	if err != nil {
		return err
	}
	defer eng.Close()
	srv, err := server.New(server.Options{Engine: eng, Tokens: tokens, Logger: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	fmt.Fprintf(e.stdout, "lore serve: listening on http://%s (home %s, tokens %s)\n", ln.Addr(), c.home, c.tokens)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-hup:
			if err := tokens.Reload(); err != nil {
				logger.Error("cannot reload the tokens file; the previous tokens stay", "err", err)
			} else {
				logger.Info("tokens reloaded", "tokens", tokens.Len())
			}
		case err := <-served:
			return err
		case <-ctx.Done():
			return shutdown(hs, srv, logger, c.shutdownTimeout)
		}
	}
}

// openTokens loads the tokens file, first creating it with a new admin token, which
// is printed this once: only its hash is kept.
func openTokens(e *env, path string) (*server.TokenStore, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		tok, err := server.AddToken(path, lore.Principal{Name: "admin", Role: lore.RoleAdmin})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(e.stdout, "lore serve: created %s with an admin token; it is shown this once:\n  %s\n", path, tok)
	}
	tokens, err := server.LoadTokens(path)
	if err != nil {
		return nil, err
	}
	if tokens.Len() == 0 {
		return nil, fmt.Errorf("tokens file %s holds no token: nobody could use the server", path)
	}
	return tokens, nil
}

// shutdown stops accepting requests, lets running statements finish within timeout,
// then cancels those still running and waits for their responses.
func shutdown(hs *http.Server, srv *server.Server, logger *slog.Logger, timeout time.Duration) error {
	srv.Drain()
	logger.Info("shutting down", "running", srv.Running(), "timeout", timeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := hs.Shutdown(ctx)
	// Paged results waiting for their next page hold no connection Shutdown waits
	// for: their statements are canceled now.
	if n := srv.CloseResults(); n > 0 {
		logger.Warn("open paged results were canceled", "canceled", n)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		n := srv.CancelAll()
		logger.Warn("statements still running at the deadline were canceled", "canceled", n)
		ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel2()
		if err = hs.Shutdown(ctx2); err != nil {
			err = hs.Close()
		}
	}
	return err
}
