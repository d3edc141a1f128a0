package flight

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/loredb/lore"
	"github.com/loredb/lore/server"
)

// Options configure a Server. Zero fields take the defaults their comments state.
type Options struct {
	// Engine runs the statements. Required.
	Engine *lore.Engine
	// Tokens authenticate calls: the HTTP server's tokens file. Required.
	Tokens *server.TokenStore
	// JWT, when set, also accepts JSON Web Tokens, as the HTTP server does.
	JWT *server.JWTVerifier
	// Tracker, when set, registers each statement with the HTTP server (server.Track),
	// so that GET /v1/queries lists and cancels Flight SQL statements too and
	// /metrics counts them.
	Tracker Tracker
	// Logger receives one line per call and operational messages. Default: discard.
	Logger *slog.Logger
	// Version is the server version GetSqlInfo reports. Default "devel".
	Version string
	// TicketTTL is how long a statement's result waits for its DoGet before it is
	// dropped. Default 2 minutes.
	TicketTTL time.Duration
	// MaxTickets bounds the results waiting for their DoGet at once; a statement
	// beyond it is RESOURCE_EXHAUSTED. Default 64.
	MaxTickets int
	// PreparedTTL is how long a prepared statement lives after its last use.
	// Default 1 hour.
	PreparedTTL time.Duration
	// MaxPrepared bounds the prepared statements open at once. Default 4096.
	MaxPrepared int
	// MaxStatementBytes bounds a statement's text, as the HTTP server does; a longer
	// one is INVALID_REQUEST. Default 1 MiB.
	MaxStatementBytes int
}

// Tracker registers statements with the HTTP server: *server.Server.
type Tracker interface {
	Track(ctx context.Context, id string, p lore.Principal, sql string) (context.Context, func(rec *lore.Record, err error), error)
}

var _ Tracker = (*server.Server)(nil)

// EnsureDefaults fills the zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "devel"
	}
	if o.TicketTTL <= 0 {
		o.TicketTTL = 2 * time.Minute
	}
	if o.MaxTickets <= 0 {
		o.MaxTickets = 64
	}
	if o.PreparedTTL <= 0 {
		o.PreparedTTL = time.Hour
	}
	if o.MaxPrepared <= 0 {
		o.MaxPrepared = 4096
	}
	if o.MaxStatementBytes <= 0 {
		o.MaxStatementBytes = 1 << 20
	}
}

// Server is the Flight SQL service over one engine. It is safe for concurrent use.
// Serve it with GRPCServer; Close drops the results and prepared statements it holds.
type Server struct {
	flightsql.BaseServer
	opts     Options
	mem      memory.Allocator
	tickets  *held[*lore.Result]
	prepared *held[string]
}

var _ flightsql.Server = (*Server)(nil)

// New returns a Server over opts.Engine.
func New(opts Options) (*Server, error) {
	if opts.Engine == nil || opts.Tokens == nil {
		return nil, errors.New("flight: an engine and a token store are required")
	}
	opts.EnsureDefaults()
	s := &Server{opts: opts, mem: memory.DefaultAllocator}
	s.BaseServer.Alloc = s.mem
	// Results are owned by the engine (its result cache may share them); dropping one
	// is letting it go, not releasing its buffers.
	s.tickets = newHeld[*lore.Result](opts.TicketTTL, opts.MaxTickets)
	s.prepared = newHeld[string](opts.PreparedTTL, opts.MaxPrepared)
	if err := s.registerSQLInfo(); err != nil {
		return nil, err
	}
	return s, nil
}

// GRPCServer returns a gRPC server that serves s behind the bearer-token
// interceptors; extra options (TLS credentials, message limits) are appended.
func (s *Server) GRPCServer(extra ...grpc.ServerOption) *grpc.Server {
	opts := append([]grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.unaryAuth),
		grpc.ChainStreamInterceptor(s.streamAuth),
	}, extra...)
	gs := grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(gs, flightsql.NewFlightServerWithAllocator(s, s.mem))
	return gs
}

// Close drops every result waiting for its DoGet and every prepared statement.
func (s *Server) Close() {
	s.tickets.clear()
	s.prepared.clear()
}

// Waiting is the number of results waiting for their DoGet.
func (s *Server) Waiting() int { return s.tickets.len() }
