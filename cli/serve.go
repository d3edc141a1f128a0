package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/loredb/lore"
	homedir "github.com/loredb/lore/internal/home"
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
	metricsOpen        bool
	rateLimit          float64
	rateBurst          int
	jwtSecret, jwtKey  string
	jwt                server.JWTConfig
	tlsCert, tlsKey    string
	maxRunning         int
	maxQueued          int
	ceilings           lore.Guardrails
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
	fs.StringVar(&c.addr, "addr", "127.0.0.1:7474", "`host:port` to listen on; beyond loopback needs TLS or --insecure")
	fs.StringVar(&c.flightAddr, "flight-addr", "", "`host:port` to serve Arrow Flight SQL on (off by default); beyond loopback needs TLS or --insecure")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "serve HTTPS (and Flight SQL over TLS) with the PEM certificate (chain) in `file`; with --tls-key")
	fs.StringVar(&c.tlsKey, "tls-key", "", "the PEM private key of --tls-cert, in `file`")
	fs.StringVar(&c.home, "home", "", "Lore's home `dir` (default $LORE_HOME, else ./.lore)")
	fs.StringVar(&c.tokens, "tokens", "", "the tokens `file` (default HOME/tokens; created with a new admin token when missing)")
	fs.BoolVar(&c.insecure, "insecure", false, "allow listening beyond loopback without TLS: tokens then cross the network in clear")
	fs.BoolVar(&c.metricsOpen, "metrics-open", false, "serve GET /metrics without a token (default: an admin token is required)")
	fs.Var(&allow, "allow-path", "a location `prefix` readers may read by path (repeatable; default none)")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long running statements may take to finish on shutdown before they are canceled")
	rateLimit := fs.String("rate-limit", "", "requests each token may make, as `N/s`, N/m or N/h (default: no limit); over it is 429 RATE_LIMITED")
	fs.IntVar(&c.rateBurst, "rate-burst", 0, "requests a token may make at once within --rate-limit (default: the rate a second, at least 1)")
	fs.StringVar(&c.jwtSecret, "jwt-hs256-secret-file", "", "accept JWTs signed with HS256 by the secret in `file` (at least 32 bytes)")
	fs.StringVar(&c.jwtKey, "jwt-rs256-public-key", "", "accept JWTs signed with RS256, checked by the PEM public key in `file`")
	fs.StringVar(&c.jwt.RoleClaim, "jwt-role-claim", "lore_role", "the JWT `claim` holding the role, admin or reader")
	fs.StringVar(&c.jwt.Audience, "jwt-audience", "", "when set, the `aud` a JWT must name")
	fs.StringVar(&c.jwt.Issuer, "jwt-issuer", "", "when set, the `iss` a JWT must have")
	fs.IntVar(&c.maxRunning, "max-running", 0, "statements that read data running at once (default: GOMAXPROCS); the rest queue")
	fs.IntVar(&c.maxQueued, "max-queued", 0, "statements that may wait for admission (default 64; negative: none); one more is 503 RESOURCE_EXHAUSTED")
	var ceilings listFlag
	fs.Var(&ceilings, "ceiling", "a guardrail ceiling `key=value`: max_execution_ms, max_rows_scanned, max_result_rows or max_result_bytes (repeatable); requests may lower it, never raise it")
	memLimit := addMemoryLimit(fs)
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return usageError(e, fs, "unexpected argument %q", fs.Arg(0))
	}
	c.home, c.memLimit, c.allowPaths = homedir.Dir(c.home), int64(*memLimit), allow
	if len(ceilings) > 0 {
		m := map[string]string{}
		for _, kv := range ceilings {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return usageError(e, fs, "--ceiling %q: want key=value, as max_execution_ms=30000", kv)
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		var err error
		if c.ceilings, err = lore.ParseGuardrails(m); err != nil {
			return usageError(e, fs, "--ceiling: %v", err)
		}
	}
	if *rateLimit != "" {
		var err error
		if c.rateLimit, err = server.ParseRate(*rateLimit); err != nil {
			return usageError(e, fs, "--rate-limit: %v", err)
		}
	}
	if c.tokens == "" {
		c.tokens = filepath.Join(c.home, "tokens")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return usageError(e, fs, "--tls-cert and --tls-key go together")
	}
	for _, addr := range []string{c.addr, c.flightAddr} {
		if addr != "" && !c.insecure && c.tlsCert == "" && !loopback(addr) {
			fmt.Fprintf(e.stderr, "lore serve: refusing to listen on %s beyond loopback without TLS (--tls-cert, --tls-key); pass --insecure to do it anyway\n", addr)
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
	var jwtv *server.JWTVerifier
	if c.jwtSecret != "" || c.jwtKey != "" {
		if jwtv, err = server.LoadJWTVerifier(c.jwtSecret, c.jwtKey, c.jwt); err != nil {
			return fmt.Errorf("JWT: %w", err)
		}
	}
	eng, err := lore.Open(ctx, lore.Options{Home: c.home, MemoryLimit: c.memLimit, AllowPaths: c.allowPaths, Logger: logger,
		MaxRunning: c.maxRunning, MaxQueued: c.maxQueued, Ceilings: c.ceilings})
	if err != nil {
		return err
	}
	defer eng.Close()
	srv, err := server.New(server.Options{Engine: eng, Tokens: tokens, Logger: logger, MetricsOpen: c.metricsOpen,
		RateLimit: c.rateLimit, RateBurst: c.rateBurst, JWT: jwtv})
	if err != nil {
		return err
	}
	var cert *certificate
	if c.tlsCert != "" {
		if cert, err = loadCertificate(c.tlsCert, c.tlsKey); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	scheme := "http"
	if cert != nil {
		scheme = "https"
		hs.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: cert.get}
		ln = tls.NewListener(ln, hs.TLSConfig)
	}
	fmt.Fprintf(e.stdout, "lore serve: listening on %s://%s (home %s, tokens %s)\n", scheme, ln.Addr(), c.home, c.tokens)
	served := make(chan error, 2)
	go func() { served <- hs.Serve(ln) }()
	fl, err := startFlight(e, c, eng, srv, tokens, jwtv, cert, logger, served)
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
			if cert != nil {
				if err := cert.reload(); err != nil {
					logger.Error("cannot reload the TLS certificate; the previous one stays", "err", err)
				} else {
					logger.Info("TLS certificate reloaded")
				}
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

// flightListener is the Flight SQL endpoint of "lore serve", when --flight-addr asks
// for one; its zero value (Flight SQL off) does nothing.
type flightListener struct {
	srv *loreflight.Server
	gs  *grpc.Server
}

// startFlight listens on c.flightAddr and serves Flight SQL there with the same
// engine, tokens and JWTs as the HTTP API, its statements registered with hs;
// Serve's end goes to served.
// With a certificate it speaks TLS (grpc+tls://), with the same certificate as HTTPS.
func startFlight(e *env, c serveConfig, eng *lore.Engine, hs *server.Server, tokens *server.TokenStore, jwt *server.JWTVerifier, cert *certificate, logger *slog.Logger, served chan<- error) (*flightListener, error) {
	if c.flightAddr == "" {
		return &flightListener{}, nil
	}
	fo := loreflight.Options{Engine: eng, Tokens: tokens, JWT: jwt, Logger: logger, Version: version()}
	if hs != nil {
		fo.Tracker = hs // its statements are listed, canceled and counted with the HTTP API's
	}
	srv, err := loreflight.New(fo)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", c.flightAddr)
	if err != nil {
		return nil, err
	}
	var opts []grpc.ServerOption
	scheme := "grpc"
	if cert != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: cert.get})))
		scheme = "grpc+tls"
	}
	gs := srv.GRPCServer(opts...)
	fmt.Fprintf(e.stdout, "lore serve: Flight SQL listening on %s://%s\n", scheme, ln.Addr())
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

// certificate is the server's TLS certificate, read again on SIGHUP so that a
// renewed one is served without a restart.
type certificate struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

func loadCertificate(certFile, keyFile string) (*certificate, error) {
	c := &certificate{certFile: certFile, keyFile: keyFile}
	return c, c.reload()
}

func (c *certificate) reload() error {
	kp, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("TLS: %w", err)
	}
	c.cur.Store(&kp)
	return nil
}

func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cur.Load(), nil }
