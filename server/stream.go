package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// streamBuffer is how much of a streamed result is held before the response begins:
// a result (or an error) that comes within it is answered whole, with its status and
// the record in a header; past it the response begins and each batch is flushed.
const streamBuffer = 64 << 10

// Trailers of a streamed response.
const (
	recordTrailer = "X-Lore-Record"
)

// streamWriter is the response side of a streamed result. It knows whether any byte
// has reached the client: until then the response may still become an error with
// its own status.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     *bufio.Writer
	started bool
	// idle bounds each write: a client that reads nothing for that long is gone, and
	// its statement is canceled rather than held (with its admission slot) forever.
	idle time.Duration
}

func newStreamWriter(w http.ResponseWriter, idle time.Duration) *streamWriter {
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), idle: idle}
	sw.buf = bufio.NewWriterSize(startWriter{sw}, streamBuffer)
	return sw
}

// startWriter is what buf writes through: the first write begins the response.
type startWriter struct{ sw *streamWriter }

func (s startWriter) Write(p []byte) (int, error) {
	s.sw.started = true
	s.sw.deadline()
	return s.sw.w.Write(p)
}

// deadline gives the next write idle to complete. (A ResponseWriter that cannot
// take a deadline leaves writes unbounded.)
func (sw *streamWriter) deadline() {
	sw.rc.SetWriteDeadline(time.Now().Add(sw.idle))
}

// flush sends what is buffered to the client, once the response has begun: a batch
// reaches the client when it is written, not when 64 KiB have gathered.
func (sw *streamWriter) flush() error {
	if !sw.started {
		return nil
	}
	if err := sw.buf.Flush(); err != nil {
		return err
	}
	sw.deadline()
	return sw.rc.Flush()
}

// finish sends everything buffered.
func (sw *streamWriter) finish() error {
	if err := sw.buf.Flush(); err != nil {
		return err
	}
	if sw.started {
		sw.deadline()
	}
	return sw.rc.Flush()
}

// resultSink encodes the batches QueryStream hands over as they come.
type resultSink struct {
	sw  *streamWriter
	enc encoder
}

var _ lore.ResultSink = (*resultSink)(nil)

func (s *resultSink) Schema(schema *arrow.Schema) error {
	return s.written(s.enc.begin(schema))
}

func (s *resultSink) Batch(b arrow.Record) error {
	if err := s.enc.batch(b); err != nil {
		return s.written(err)
	}
	return s.written(s.sw.flush())
}

// written turns a failed write into CANCELED: the client is gone, so the statement
// stops (its scan reads no further). An encoder's own error (coded) passes through.
func (s *resultSink) written(err error) error {
	var le *errs.Error
	if err == nil || errors.As(err, &le) {
		return err
	}
	return errs.New(errs.Canceled, "the client went away: %w", err)
}

// streamResult runs a statement whose result streams to the client in format
// (arrow, ndjson, csv). The rule for the record: the X-Lore-Record trailer always
// carries it; when the whole result was produced before the response began (it fit in
// the first 64 KiB) the header of that name carries it too. An error before the
// response began is answered as JSON with its status; one after aborts the response
// (ndjson first writes its error line), so that no client takes a cut stream for a
// complete result.
func (s *Server) streamResult(ctx context.Context, w http.ResponseWriter, q *query, format string, settings map[string]string) {
	h := w.Header()
	h.Set("Content-Type", formatTypes[format])
	h.Set("Trailer", recordTrailer)
	sw := newStreamWriter(w, s.opts.ResultIdleTimeout)
	enc := newEncoder(format, sw.buf)
	rec, err := s.opts.Engine.QueryStream(ctx, q.sql, settings, &resultSink{sw: sw, enc: enc})
	if err == nil {
		err = enc.end()
	}
	if err != nil {
		s.ended(q, rec, err)
		if !sw.started {
			h.Del("Trailer")
			writeErrorRecord(w, q.id, err, rec)
			return
		}
		enc.fail(bodyOf(err))
		sw.finish()
		s.opts.Logger.Warn("a streamed result stopped after it began; the response is aborted",
			"query_id", q.id, "format", format, "err", err)
		panic(http.ErrAbortHandler)
	}
	s.ended(q, rec, nil)
	doc, jerr := json.Marshal(rec)
	if jerr != nil {
		s.opts.Logger.Error("cannot encode a record", "query_id", q.id, "err", jerr)
		panic(http.ErrAbortHandler)
	}
	// Set before the first byte goes out, it is a header and a trailer; after, a
	// trailer only.
	h.Set(recordTrailer, asciiJSON(doc))
	if err := sw.finish(); err != nil {
		s.opts.Logger.Warn("cannot write a result", "query_id", q.id, "format", format, "err", err)
		panic(http.ErrAbortHandler)
	}
	// The deadline stays for the body's end and the trailer, written after the
	// handler returns; net/http lifts it before the connection's next request.
}

// ended records in the registry how statement q ended.
func (s *Server) ended(q *query, rec *lore.Record, err error) {
	if err == nil {
		s.queries.finish(q, StateFinished, rec, nil)
		return
	}
	state := StateFailed
	if errs.CodeOf(err) == errs.Canceled {
		state = StateCanceled
	}
	s.queries.finish(q, state, rec, bodyOf(err))
}
