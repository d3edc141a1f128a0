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

	"google.golang.org/grpc"

	"github.com/loredb/lore"
	"github.com/loredb/lore/server"
	loreflight "github.com/loredb/lore/server/flight"
)

// listFlag collects a repeated string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// serveConfig is what "lore serve" was asked to do.
type serveConfig struct {
	addr, home, tokens string
	flightAddr         string // "" when Flight SQL is off
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
	fs.StringVar(&c.flightAddr, "flight-addr", "", "`host:port` to serve Arrow Flight SQL on (off by default); beyond loopback needs --insecure")
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
	for _, addr := range []string{c.addr, c.flightAddr} {
		if addr != "" && !c.insecure && !loopback(addr) {
			fmt.Fprintf(e.stderr, "lore serve: refusing to listen on %s beyond loopback without TLS (TLS is not built yet); pass --insecure to do it anyway\n", addr)
			return exitUsage
		}
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
	served := make(chan error, 2)
	go func() { served <- hs.Serve(ln) }()
	fl, err := startFlight(e, c, eng, tokens, logger, served)
	if err != nil {
		hs.Close()
		return err
	}
	defer fl.close()
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
			// Both listeners stop at once, under the one deadline.
			flightDone := make(chan struct{})
			go func() { fl.stop(c.shutdownTimeout, logger); close(flightDone) }()
			err := shutdown(hs, srv, logger, c.shutdownTimeout)
			<-flightDone
			return err
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

// flightListener is the Flight SQL endpoint of "lore serve", when --flight-addr asks
// for one; its zero value (Flight SQL off) does nothing.
type flightListener struct {
	srv *loreflight.Server
	gs  *grpc.Server
}

// startFlight listens on c.flightAddr and serves Flight SQL there with the same
// engine and tokens as the HTTP API; Serve's end goes to served.
func startFlight(e *env, c serveConfig, eng *lore.Engine, tokens *server.TokenStore, logger *slog.Logger, served chan<- error) (*flightListener, error) {
	if c.flightAddr == "" {
		return &flightListener{}, nil
	}
	srv, err := loreflight.New(loreflight.Options{Engine: eng, Tokens: tokens, Logger: logger, Version: version()})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", c.flightAddr)
	if err != nil {
		return nil, err
	}
	gs := srv.GRPCServer()
	fmt.Fprintf(e.stdout, "lore serve: Flight SQL listening on grpc://%s\n", ln.Addr())
	go func() { served <- gs.Serve(ln) }()
	return &flightListener{srv: srv, gs: gs}, nil
}

// stop lets running calls finish within timeout (GracefulStop), then ends those
// still running (Stop cancels their contexts, so their statements stop too).
func (f *flightListener) stop(timeout time.Duration, logger *slog.Logger) {
	if f.gs == nil {
		return
	}
	done := make(chan struct{})
	go func() { f.gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		logger.Warn("Flight SQL calls still running at the deadline were canceled")
		f.gs.Stop()
		<-done
	}
}

// close stops the gRPC server, if stop has not, and drops the results and prepared
// statements it holds.
func (f *flightListener) close() {
	if f.gs == nil {
		return
	}
	f.gs.Stop()
	f.srv.Close()
}
