package flight

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/sql"
	"github.com/loredb/lore/vector"
)

// run runs one statement as ctx's principal under a new query id, so that it shows
// in the query log with its subject; errors become gRPC statuses.
func (s *Server) run(ctx context.Context, text string, txn []byte) (string, *lore.Result, error) {
	if _, err := principal(ctx); err != nil {
		return "", nil, err
	}
	if err := s.checkStatement(text, txn); err != nil {
		return "", nil, statusError(err, "")
	}
	id := newHandle()
	noteQueryID(ctx, id)
	end := func(*lore.Record, error) {}
	if t := s.opts.Tracker; t != nil {
		p, _ := principal(ctx)
		var err error
		if ctx, end, err = t.Track(ctx, id, p, text); err != nil {
			return id, nil, statusError(err, id)
		}
	}
	res, err := s.opts.Engine.Query(lore.WithQueryID(ctx, id), text, nil)
	if err != nil {
		end(nil, err)
		return id, nil, statusError(err, id)
	}
	end(res.Record, nil)
	return id, res, nil
}

// checkStatement refuses what the engine would not be asked: an empty or too long
// text, a transaction (Lore has none).
func (s *Server) checkStatement(text string, txn []byte) error {
	switch {
	case len(txn) > 0:
		return errs.New(errs.InvalidRequest, "Lore has no transactions: send the statement without a transaction id")
	case strings.TrimSpace(text) == "":
		return errs.New(errs.InvalidRequest, "the statement is empty")
	case len(text) > s.opts.MaxStatementBytes:
		return errs.New(errs.InvalidRequest, "the statement is %d bytes, over the server's limit of %d", len(text), s.opts.MaxStatementBytes)
	}
	return nil
}

// GetFlightInfoStatement runs the statement now, keeps its result under a ticket
// that expires after Options.TicketTTL, and answers with the result's schema, its row
// count and one endpoint holding the ticket. Running at GetFlightInfo is what makes
// the schema in the FlightInfo the result's own (Lore cannot plan a statement's
// schema without running it) and lets a failing statement fail here, where clients
// expect errors, rather than half-way through a stream.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.flightInfoOf(ctx, cmd.GetQuery(), cmd.GetTransactionId(), desc)
}

func (s *Server) flightInfoOf(ctx context.Context, text string, txn []byte, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	id, res, err := s.run(ctx, text, txn)
	if err != nil {
		return nil, err
	}
	p, _ := principal(ctx)
	ticket, err := flightsql.CreateStatementQueryTicket([]byte(id))
	if err != nil {
		return nil, statusError(errs.New(errs.Internal, "cannot make a ticket: %w", err), id)
	}
	if !s.tickets.put(id, p, res) {
		return nil, statusError(errs.New(errs.ResourceExhausted,
			"%d results are waiting for their DoGet already; fetch or let them expire (after %s) and try again",
			s.opts.MaxTickets, s.opts.TicketTTL), id)
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(vector.WideSchema(res.Schema), s.mem),
		FlightDescriptor: desc,
		Endpoint: []*flight.FlightEndpoint{{
			Ticket:         &flight.Ticket{Ticket: ticket},
			ExpirationTime: timestamppb.New(time.Now().Add(s.opts.TicketTTL)),
		}},
		TotalRecords: res.NumRows(),
		TotalBytes:   -1,
		Ordered:      true,
	}, nil
}

// DoGetStatement streams the result kept under the ticket and forgets it: a ticket
// is fetched once. A ticket that expired, was fetched already or is another
// principal's is NOT_FOUND.
func (s *Server) DoGetStatement(ctx context.Context, ticket flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, nil, err
	}
	id := string(ticket.GetStatementHandle())
	noteQueryID(ctx, id)
	res, ok := s.tickets.take(id, p)
	if !ok {
		return nil, nil, statusError(errs.New(errs.NotFound,
			"no result waits under this ticket: it was fetched already, expired (after %s), or was never issued", s.opts.TicketTTL), "")
	}
	return vector.WideSchema(res.Schema), s.streamResult(ctx, res), nil
}

// streamResult streams a materialised result.
func (s *Server) streamResult(ctx context.Context, res *lore.Result) <-chan flight.StreamChunk {
	return s.stream(ctx, res.Schema, splitLarge(sliceBatches(res.Batches), maxMessageBytes), res.Record)
}

// batchBytes is the size of a batch's buffers (dictionaries aside).
func batchBytes(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}

// --- prepared statements ---

// CreatePreparedStatement parses the statement (a syntax error is reported now) and
// keeps its text under a new handle. Lore does not bind parameters (a $1 in a
// statement is an ANALYSIS_ERROR when it runs), so the parameter schema is empty;
// nor can it plan a result's schema without running the statement, so the dataset
// schema is left out: it arrives with each execution's FlightInfo.
func (s *Server) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var out flightsql.ActionCreatePreparedStatementResult
	p, err := principal(ctx)
	if err != nil {
		return out, err
	}
	text := req.GetQuery()
	if err := s.checkStatement(text, req.GetTransactionId()); err != nil {
		return out, statusError(err, "")
	}
	if _, err := sql.Parse(text); err != nil {
		return out, statusError(err, "")
	}
	handle := newHandle()
	if !s.prepared.put(handle, p, text) {
		return out, statusError(errs.New(errs.ResourceExhausted, "%d prepared statements are open already; close some", s.opts.MaxPrepared), "")
	}
	out.Handle = []byte(handle)
	return out, nil
}

// ClosePreparedStatement forgets a prepared statement. Closing one that is unknown
// (closed already, expired, another's) succeeds: the client's wish holds.
func (s *Server) ClosePreparedStatement(ctx context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	s.prepared.take(string(req.GetPreparedStatementHandle()), p)
	return nil
}

// preparedText is the text of a prepared statement of ctx's principal.
func (s *Server) preparedText(ctx context.Context, handle []byte) (string, error) {
	p, err := principal(ctx)
	if err != nil {
		return "", err
	}
	text, ok := s.prepared.get(string(handle), p)
	if !ok {
		return "", statusError(errs.New(errs.NotFound,
			"no prepared statement of this handle: it was closed, expired (after %s idle), or was never made", s.opts.PreparedTTL), "")
	}
	return text, nil
}

// GetFlightInfoPreparedStatement executes a prepared statement as
// GetFlightInfoStatement executes a statement.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	text, err := s.preparedText(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	return s.flightInfoOf(ctx, text, nil, desc)
}

// DoGetPreparedStatement serves a client that uses the prepared statement's command
// itself as the ticket: the statement runs now and streams.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	text, err := s.preparedText(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	_, res, err := s.run(ctx, text, nil)
	if err != nil {
		return nil, nil, err
	}
	return vector.WideSchema(res.Schema), s.streamResult(ctx, res), nil
}

// DoPutPreparedStatementQuery is where a client binds parameters: refused, since
// Lore does not bind them.
func (s *Server) DoPutPreparedStatementQuery(ctx context.Context, _ flightsql.PreparedStatementQuery, _ flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	return nil, statusError(errs.New(errs.InvalidRequest, "Lore does not bind parameters: prepare a statement without $1 or ? placeholders"), "")
}

// DoPutPreparedStatementUpdate executes a prepared statement as an update; a
// parameter row sent with it is refused.
func (s *Server) DoPutPreparedStatementUpdate(ctx context.Context, cmd flightsql.PreparedStatementUpdate, rdr flight.MessageReader) (int64, error) {
	text, err := s.preparedText(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return 0, err
	}
	for rdr.Next() {
		if rdr.RecordBatch().NumRows() > 0 {
			return 0, statusError(errs.New(errs.InvalidRequest, "Lore does not bind parameters: send no parameter rows"), "")
		}
	}
	return s.update(ctx, text, nil)
}

// DoPutCommandStatementUpdate runs a statement that changes the catalog or what it
// has learnt (CREATE, DROP, ALTER, ANALYZE, OPTIMIZE). Such statements change no
// data rows, so the count is 0; their result, if any, is dropped (run them as a query
// to see it). The record is in the query log under the statement's id.
func (s *Server) DoPutCommandStatementUpdate(ctx context.Context, cmd flightsql.StatementUpdate) (int64, error) {
	return s.update(ctx, cmd.GetQuery(), cmd.GetTransactionId())
}

func (s *Server) update(ctx context.Context, text string, txn []byte) (int64, error) {
	if _, _, err := s.run(ctx, text, txn); err != nil {
		return 0, err
	}
	return 0, nil
}

// --- streaming ---

// batchIter yields a result's batches in order, then (nil, nil); the caller owns
// one reference of each batch it is given and releases it. The engine's materialised
// results are a slice; a streaming result will be another iterator, and stream does
// not change.
type batchIter func() (arrow.RecordBatch, error)

// sliceBatches iterates over batches owned by someone else (the result, which the
// engine's result cache may share): each is retained for the caller.
func sliceBatches(batches []arrow.RecordBatch) batchIter {
	i := 0
	return func() (arrow.RecordBatch, error) {
		if i == len(batches) {
			return nil, nil
		}
		i++
		b := batches[i-1]
		b.Retain()
		return b, nil
	}
}

// maxMessageBytes bounds the data of one FlightData message: gRPC clients refuse a
// message over 4 MiB unless told otherwise, and a batch of wide rows is larger.
const maxMessageBytes = 2 << 20

// splitLarge cuts a batch over maxBytes into row slices of about maxBytes each (by
// its average row size), so that every message fits a client's default limit.
func splitLarge(next batchIter, maxBytes int64) batchIter {
	var cur arrow.RecordBatch
	var at, step int64
	return func() (arrow.RecordBatch, error) {
		if cur == nil {
			b, err := next()
			if b == nil || err != nil {
				return b, err
			}
			size, rows := batchBytes(b), b.NumRows()
			if size <= maxBytes || rows <= 1 {
				return b, nil
			}
			cur, at, step = b, 0, max(1, rows*maxBytes/size)
		}
		end := min(at+step, cur.NumRows())
		part := cur.NewSlice(at, end)
		if at = end; at == cur.NumRows() {
			cur.Release()
			cur = nil
		}
		return part, nil
	}
}

// stream sends next's batches as stream chunks, in a goroutine, holding one batch
// back so that the last one can carry the query record (JSON) as its app_metadata:
// with a streaming result the record is complete only once the last batch is
// known. A result without rows sends one empty batch to carry it. flightsql releases
// each batch it writes, the reference next gave. The channel is closed at the end, on
// an error (sent as a chunk) or when ctx ends.
func (s *Server) stream(ctx context.Context, schema *arrow.Schema, next batchIter, rec *lore.Record) <-chan flight.StreamChunk {
	ch := make(chan flight.StreamChunk, 1)
	send := func(c flight.StreamChunk) bool {
		select {
		case ch <- c:
			return true
		case <-ctx.Done():
			if c.Data != nil {
				c.Data.Release()
			}
			return false
		}
	}
	go func() {
		defer close(ch)
		var pending arrow.RecordBatch
		for {
			b, err := next()
			if err != nil {
				if pending != nil {
					pending.Release()
				}
				send(flight.StreamChunk{Err: statusError(err, recordID(rec))})
				return
			}
			if b == nil {
				break
			}
			if pending != nil && !send(flight.StreamChunk{Data: pending}) {
				b.Release()
				return
			}
			// Decimals go out in 128 bits, which every Arrow reader takes.
			pending = vector.WideRecord(b)
		}
		if pending == nil {
			pending = emptyBatch(s, vector.WideSchema(schema))
		}
		send(flight.StreamChunk{Data: pending, AppMetadata: recordJSON(s, rec)})
	}()
	return ch
}

func emptyBatch(s *Server, schema *arrow.Schema) arrow.RecordBatch {
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	return b.NewRecordBatch()
}

// recordJSON is the query record as app_metadata; nil (and a log line) if it cannot
// be encoded, which leaves the result intact.
func recordJSON(s *Server, rec *lore.Record) []byte {
	if rec == nil {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		s.opts.Logger.Error("cannot encode a query record", "query_id", rec.ID, "err", err)
		return nil
	}
	return b
}

func recordID(rec *lore.Record) string {
	if rec == nil {
		return ""
	}
	return rec.ID
}

// newHandle is a random id for a statement, its ticket or a prepared statement.
func newHandle() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("BUG: no randomness: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// --- a waiting result's lifetime ---

// ticketHandle is the handle of a statement ticket of this server.
func ticketHandle(t *flight.Ticket) (string, bool) {
	if t == nil {
		return "", false
	}
	tq, err := flightsql.GetStatementQueryTicket(t)
	if err != nil {
		return "", false
	}
	return string(tq.GetStatementHandle()), true
}

// CancelFlightInfo drops the results of info's endpoints that still wait for their
// DoGet (the statement ran at GetFlightInfo: what is left to cancel is the fetch).
// Nothing waiting, as when it was fetched or expired, is NOT_CANCELLABLE.
func (s *Server) CancelFlightInfo(ctx context.Context, req *flight.CancelFlightInfoRequest) (flight.CancelFlightInfoResult, error) {
	p, err := principal(ctx)
	if err != nil {
		return flight.CancelFlightInfoResult{Status: flight.CancelStatusUnspecified}, err
	}
	dropped := false
	for _, ep := range req.GetInfo().GetEndpoint() {
		if h, ok := ticketHandle(ep.GetTicket()); ok {
			if _, ok := s.tickets.take(h, p); ok {
				dropped = true
			}
		}
	}
	if !dropped {
		return flight.CancelFlightInfoResult{Status: flight.CancelStatusNotCancellable}, nil
	}
	return flight.CancelFlightInfoResult{Status: flight.CancelStatusCancelled}, nil
}

// RenewFlightEndpoint gives a waiting result another Options.TicketTTL.
func (s *Server) RenewFlightEndpoint(ctx context.Context, req *flight.RenewFlightEndpointRequest) (*flight.FlightEndpoint, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	ep := req.GetEndpoint()
	h, ok := ticketHandle(ep.GetTicket())
	if ok {
		_, ok = s.tickets.get(h, p)
	}
	if !ok {
		return nil, statusError(errs.New(errs.NotFound, "no result waits under this ticket: it was fetched already, expired, or was never issued"), "")
	}
	return &flight.FlightEndpoint{Ticket: ep.GetTicket(), Location: ep.GetLocation(),
		ExpirationTime: timestamppb.New(time.Now().Add(s.opts.TicketTTL)), AppMetadata: ep.GetAppMetadata()}, nil
}
