package flight

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/server"
)

// callLog is what a call's handlers add to its log line.
type callLog struct {
	subject string
	queryID string
}

type callLogKey struct{}

// authenticate finds the principal of a call's "authorization: Bearer <token>"
// metadata and returns the context the call runs in: the principal set with
// lore.WithPrincipal, so that the engine enforces its role. A token is what it is to
// the HTTP API (server.Authenticate: the tokens file, else a JWT); a missing or
// unknown one is UNAUTHENTICATED (codes.Unauthenticated).
func (s *Server) authenticate(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	token, ok := bearer(md.Get("authorization"))
	if !ok {
		return nil, statusError(errs.New(errs.Unauthenticated, "a bearer token is required (metadata authorization: Bearer <token>)"), "")
	}
	p, err := server.Authenticate(s.opts.Tokens, s.opts.JWT, token)
	if err != nil {
		return nil, statusError(err, "")
	}
	if l, ok := ctx.Value(callLogKey{}).(*callLog); ok {
		l.subject = p.Name
	}
	return lore.WithEndpoint(lore.WithPrincipal(ctx, p), "flight"), nil
}

// bearer is the token of the one authorization value "Bearer <token>".
func bearer(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// principal is who ctx runs as. The interceptors set it on every call; a call that
// reached a handler without one is refused rather than run as the process (which
// the engine would take for an admin).
func principal(ctx context.Context) (lore.Principal, error) {
	p, ok := lore.PrincipalOf(ctx)
	if !ok {
		return lore.Principal{}, statusError(errs.New(errs.Unauthenticated, "the call has no principal"), "")
	}
	return p, nil
}

func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	ctx, done := s.logCall(ctx, info.FullMethod)
	defer func() { done(err) }()
	if ctx, err = s.authenticate(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (s *Server) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	ctx, done := s.logCall(ss.Context(), info.FullMethod)
	defer func() { done(err) }()
	if ctx, err = s.authenticate(ctx); err != nil {
		if info.IsClientStream {
			awaitFirstMessage(ss)
		}
		return err
	}
	return h(srv, &authedStream{ServerStream: ss, ctx: ctx})
}

// awaitFirstMessage receives the first message of a refused client stream (DoPut)
// before the refusal is sent, waiting a second at most. A client whose stream ended
// before its first Send gets io.EOF from that Send, and clients that do not then read
// the stream's status (arrow-go's ExecuteUpdate) would report EOF, not
// Unauthenticated.
func awaitFirstMessage(ss grpc.ServerStream) {
	got := make(chan struct{})
	go func() {
		var m flight.FlightData
		ss.RecvMsg(&m) // ends, at the latest, when the call does
		close(got)
	}()
	select {
	case <-got:
	case <-time.After(time.Second):
	}
}

// authedStream is a server stream whose context carries the principal.
type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (a *authedStream) Context() context.Context { return a.ctx }

// logCall starts a call's log line: method, gRPC code, milliseconds, subject (the
// token's name) and query id. Never the metadata, so never a token.
func (s *Server) logCall(ctx context.Context, method string) (context.Context, func(error)) {
	start := time.Now()
	l := &callLog{}
	return context.WithValue(ctx, callLogKey{}, l), func(err error) {
		s.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "flight call",
			slog.String("method", method), slog.String("code", status.Code(err).String()),
			slog.Float64("ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("subject", l.subject), slog.String("query_id", l.queryID))
	}
}

// noteQueryID names the statement of the call in its log line.
func noteQueryID(ctx context.Context, id string) {
	if l, ok := ctx.Value(callLogKey{}).(*callLog); ok {
		l.queryID = id
	}
}
