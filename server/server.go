package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// Options configure a Server.
type Options struct {
	// Engine runs the statements. Required.
	Engine *lore.Engine
	// Tokens authenticate requests. Required: every /v1 request needs a bearer token.
	Tokens *TokenStore
	// Logger receives the access log and operational messages. Default: discard.
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body; a longer one is 413 REQUEST_TOO_LARGE.
	// Default 4 MiB.
	MaxBodyBytes int64
	// MaxStatementBytes bounds a statement's text; a longer one is 400
	// INVALID_REQUEST. Default 1 MiB.
	MaxStatementBytes int
	// MetricsOpen serves GET /metrics without a token, for a Prometheus scraper on
	// a trusted network; otherwise /metrics needs an admin token.
	MetricsOpen bool
	// RateLimit, when positive, is how many requests a second each principal (token
	// name) may make, with bursts of RateBurst (default: the rate, at least 1); a
	// request over it is 429 RATE_LIMITED with Retry-After.
	RateLimit float64
	RateBurst int
	// JWT, when set, also accepts JSON Web Tokens as bearer tokens (jwt.go).
	JWT *JWTVerifier
	// PageRows and PageBytes are a json page's default bounds (10,000 rows, 4 MiB);
	// a request's page_rows and page_bytes may ask for others up to MaxPageRows and
	// MaxPageBytes (1,000,000 rows, 64 MiB).
	PageRows, PageBytes       int
	MaxPageRows, MaxPageBytes int
	// ResultIdleTimeout is how long a paged result waits for its next page to be
	// asked for before its statement is canceled (RESULT_EXPIRED), and how long a
	// streamed result waits for a client that reads nothing before its response is
	// cut and its statement canceled. Default 60 s.
	ResultIdleTimeout time.Duration
	// MaxOpenResults bounds the paged results open at once; a result that would page
	// past it is 503 RESOURCE_EXHAUSTED. Default 64.
	MaxOpenResults int
	// WorkerIdle is how long a statement worker waits for the next statement before
	// it ends. Default 10 s.
	WorkerIdle time.Duration
}

// Server is the HTTP API over one engine. It is safe for concurrent use.
type Server struct {
	opts     Options
	queries  *registry
	metrics  *metrics
	limits   *limiters
	pages    *pageTable
	workers  *workers // run the json statements, whose results page
	draining atomic.Bool
	handler  http.Handler
}

// New returns a Server; Handler serves it.
func New(opts Options) (*Server, error) {
	if opts.Engine == nil || opts.Tokens == nil {
		return nil, errors.New("server: an engine and a token store are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.MaxStatementBytes <= 0 {
		opts.MaxStatementBytes = 1 << 20
	}
	opts.pagingDefaults()
	if opts.WorkerIdle <= 0 {
		opts.WorkerIdle = 10 * time.Second
	}
	s := &Server{opts: opts, queries: newRegistry(), metrics: newMetrics(opts.Engine), pages: newPageTable(opts.MaxOpenResults),
		workers: newWorkers(opts.WorkerIdle)}
	s.queries.ended = s.metrics.observe
	s.limits = newLimiters(opts.RateLimit, opts.RateBurst)
	s.handler = s.routes()
	return s, nil
}

// Handler is the server's HTTP handler, access log included.
func (s *Server) Handler() http.Handler { return s.handler }

// Drain marks the server as shutting down: /readyz answers 503 so that a balancer
// stops sending work, while running statements go on.
func (s *Server) Drain() { s.draining.Store(true) }

// CancelAll cancels every running statement and returns how many there were.
func (s *Server) CancelAll() int { return s.queries.cancelAll() }

// Running is the number of statements running now.
func (s *Server) Running() int { return s.queries.Running() }

// authed is a handler of an authenticated request.
type authed func(w http.ResponseWriter, r *http.Request, p lore.Principal)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.serveMetrics())
	mux.Handle("POST /v1/statement", s.auth(s.statement))
	mux.Handle("GET /v1/statement/{id}/{token}", s.auth(s.nextPage))
	mux.Handle("GET /v1/queries", s.auth(s.listQueries))
	mux.Handle("GET /v1/queries/{id}", s.auth(s.getQuery))
	mux.Handle("DELETE /v1/queries/{id}", s.auth(s.cancelQuery))
	mux.Handle("GET /v1/catalog/tables", s.auth(s.tables))
	mux.Handle("GET /v1/catalog/tables/{name}/version", s.auth(s.tableVersion))
	mux.Handle("GET /v1/catalog/tables/{name}/statistics", s.auth(s.tableStatistics))
	mux.Handle("DELETE /v1/cache", s.auth(adminOnly(s.clearCache)))
	mux.Handle("GET /v1/statistics", s.auth(adminOnly(s.allStatistics)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, "", errs.New(errs.NotFound, "no endpoint %s %s (see docs/server.md)", r.Method, r.URL.Path))
	})
	return s.accessLog(compress(mux))
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// auth authenticates a request by its bearer token and runs h as its principal; a
// missing or unknown token is 401 UNAUTHENTICATED.
func (s *Server) auth(h authed) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="lore"`)
			writeError(w, "", errs.New(errs.Unauthenticated, "a bearer token is required (Authorization: Bearer <token>)"))
			return
		}
		p, err := s.principal(token)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="lore", error="invalid_token"`)
			writeError(w, "", err)
			return
		}
		if l, ok := r.Context().Value(logKey{}).(*logFields); ok {
			l.subject = p.Name
		}
		if wait, err := s.limits.allow(p.Name, time.Now()); err != nil {
			w.Header().Set("Retry-After", retryAfter(wait))
			writeError(w, "", err)
			return
		}
		h(w, r, p)
	})
}

// principal is the principal of a bearer token (Authenticate).
func (s *Server) principal(token string) (lore.Principal, error) {
	return Authenticate(s.opts.Tokens, s.opts.JWT, token)
}

// Authenticate is the principal of a bearer token: one of the tokens file, else a
// JWT when jwt is not nil; otherwise UNAUTHENTICATED. The HTTP API and Flight SQL
// both authenticate here, so a credential means the same on either port.
func Authenticate(tokens *TokenStore, jwt *JWTVerifier, token string) (lore.Principal, error) {
	if p, ok := tokens.Lookup(token); ok {
		return p, nil
	}
	if jwt != nil && looksLikeJWT(token) {
		return jwt.Verify(token)
	}
	return lore.Principal{}, errs.New(errs.Unauthenticated, "the bearer token is not known")
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// --- access log ---

type logKey struct{}

// logFields are what handlers add to a request's access-log line.
type logFields struct {
	subject string
	queryID string
}

// statusWriter remembers the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog logs one line per request: method, path, status, bytes, duration, the
// token's name and the query id. Never a header, so never a token.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		lf := &logFields{}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), logKey{}, lf)))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		s.opts.Logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.Int64("bytes", sw.bytes),
			slog.Float64("ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("subject", lf.subject), slog.String("query_id", lf.queryID),
			slog.String("remote", r.RemoteAddr))
	})
}

// --- errors ---

// errorBody is the "error" member of an error response.
type errorBody struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Position *int   `json:"position,omitempty"`
}

func bodyOf(err error) *errorBody {
	b := &errorBody{Code: string(errs.CodeOf(err)), Message: err.Error()}
	if p := errs.PositionOf(err); p != errs.NoPosition {
		b.Position = &p
	}
	return b
}

// writeError writes {"error": {...}, "query_id"?} with the status of err's code:
// the one place where an error becomes an HTTP status.
func writeError(w http.ResponseWriter, id string, err error) {
	writeErrorRecord(w, id, err, nil)
}

func writeErrorRecord(w http.ResponseWriter, id string, err error, rec *lore.Record) {
	code := errs.CodeOf(err)
	if errors.Is(err, lore.ErrQueueFull) {
		// The server is busy, not the request too big: it may be sent again.
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, errs.Status(code), struct {
		Error   *errorBody   `json:"error"`
		QueryID string       `json:"query_id,omitempty"`
		Record  *lore.Record `json:"record,omitempty"`
	}{bodyOf(err), id, rec})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // no HTML around: keep <, > and & readable
	err := enc.Encode(v)
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"INTERNAL","message":"cannot encode the response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
