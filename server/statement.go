package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// statementRequest is the body of POST /v1/statement.
type statementRequest struct {
	SQL      string         `json:"sql"`
	Settings map[string]any `json:"settings"`
	Format   string         `json:"format"`
	QueryID  string         `json:"query_id"`
	// ExpectSourceVersion maps table names to the identity digest (the ETag of
	// GET /v1/catalog/tables/{name}/version) the statement must read them at.
	ExpectSourceVersion map[string]string `json:"expect_source_version"`
	// PageRows and PageBytes bound a json page (0: the server's default).
	PageRows  int `json:"page_rows"`
	PageBytes int `json:"page_bytes"`
}

// maxQueryID bounds a client's query id.
const maxQueryID = 128

func (s *Server) statement(w http.ResponseWriter, r *http.Request, p lore.Principal) {
	req, settings, err := s.readStatement(w, r)
	if err != nil {
		writeError(w, "", err)
		return
	}
	format, err := chooseFormat(req.Format, r.Header.Get("Accept"))
	if err != nil {
		writeError(w, "", err)
		return
	}
	limits, err := s.pageLimits(req, format)
	if err != nil {
		writeError(w, "", err)
		return
	}
	id := req.QueryID
	if id == "" {
		id = newQueryID()
	}
	w.Header().Set("X-Lore-Query-Id", id)
	if l, ok := r.Context().Value(logKey{}).(*logFields); ok {
		l.queryID = id
	}
	q := &query{id: id, owner: p, sql: req.SQL, started: time.Now()}
	// The statement runs as the token's principal, under its id, pinned to the
	// versions it expects, reporting its progress to the registry.
	annotate := func(ctx context.Context) context.Context {
		ctx = lore.WithQueryID(lore.WithEndpoint(lore.WithPrincipal(ctx, p), "http"), id)
		ctx = lore.WithExpectedVersions(ctx, req.ExpectSourceVersion)
		return q.track(ctx)
	}
	if format == "json" {
		s.startPaged(w, r, q, annotate, settings, limits)
		return
	}
	// The statement's context ends with the request (a client that disconnects
	// cancels it) or with DELETE /v1/queries/{id}.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	q.cancel = cancel
	if err := s.queries.start(q); err != nil {
		writeError(w, id, err)
		return
	}
	s.streamResult(annotate(ctx), w, q, format, settings)
}

// pageLimits are a json request's page bounds: its page_rows and page_bytes, within
// the server's maxima, else the server's defaults.
func (s *Server) pageLimits(req statementRequest, format string) (pageLimits, error) {
	l := pageLimits{rows: s.opts.PageRows, bytes: s.opts.PageBytes}
	if (req.PageRows != 0 || req.PageBytes != 0) && format != "json" {
		return l, errs.New(errs.InvalidRequest, "page_rows and page_bytes page the json format; %s streams", format)
	}
	switch {
	case req.PageRows < 0 || req.PageRows > s.opts.MaxPageRows:
		return l, errs.New(errs.InvalidRequest, "page_rows %d is outside 1 to %d", req.PageRows, s.opts.MaxPageRows)
	case req.PageBytes < 0 || req.PageBytes > s.opts.MaxPageBytes:
		return l, errs.New(errs.InvalidRequest, "page_bytes %d is outside 1 to %d", req.PageBytes, s.opts.MaxPageBytes)
	}
	if req.PageRows > 0 {
		l.rows = req.PageRows
	}
	if req.PageBytes > 0 {
		l.bytes = req.PageBytes
	}
	return l, nil
}

// readStatement decodes and checks the request body, and turns its settings into the
// engine's strings.
func (s *Server) readStatement(w http.ResponseWriter, r *http.Request) (statementRequest, map[string]string, error) {
	var req statementRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return req, nil, errs.New(errs.RequestTooLarge, "the request body is over the server's limit of %d bytes", tooLarge.Limit)
		}
		return req, nil, errs.New(errs.InvalidRequest, "cannot read the request body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return req, nil, errs.New(errs.InvalidRequest, "the body is not a statement request {\"sql\", \"settings\", \"format\", \"query_id\"}: %v", err)
	}
	if dec.More() {
		return req, nil, errs.New(errs.InvalidRequest, "the body holds more than one JSON value")
	}
	switch {
	case strings.TrimSpace(req.SQL) == "":
		return req, nil, errs.New(errs.InvalidRequest, `"sql" is required`)
	case len(req.SQL) > s.opts.MaxStatementBytes:
		return req, nil, errs.New(errs.InvalidRequest, "the statement is %d bytes, over the server's limit of %d", len(req.SQL), s.opts.MaxStatementBytes)
	}
	if err := checkQueryID(req.QueryID); err != nil {
		return req, nil, err
	}
	settings, err := settingStrings(req.Settings)
	return req, settings, err
}

// checkQueryID accepts an empty id (the server makes one) or up to maxQueryID
// letters, digits and . _ - : — an id travels in URLs and headers.
func checkQueryID(id string) error {
	if len(id) > maxQueryID {
		return errs.New(errs.InvalidRequest, "query_id is %d bytes, over the limit of %d", len(id), maxQueryID)
	}
	for _, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-:", c)
		if !ok {
			return errs.New(errs.InvalidRequest, "query_id may hold letters, digits and . _ - : only")
		}
	}
	return nil
}

// settingStrings turns JSON setting values (strings, booleans, numbers) into the
// engine's text values; the engine validates them (400 INVALID_SETTING).
func settingStrings(in map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case string:
			out[k] = x
		case bool:
			out[k] = fmt.Sprint(x)
		case json.Number:
			out[k] = x.String()
		default:
			return nil, errs.New(errs.InvalidSetting, "setting %q: want a string, a number or a boolean", k)
		}
	}
	return out, nil
}

// chooseFormat is the request's "format", else what Accept asks for, else json.
func chooseFormat(format, accept string) (string, error) {
	if format != "" {
		if _, ok := formatTypes[format]; !ok {
			return "", errs.New(errs.InvalidRequest, "unknown format %q (want json, arrow, ndjson or csv)", format)
		}
		return format, nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		for f, ct := range formatTypes {
			if ctBase, _, _ := strings.Cut(ct, ";"); strings.EqualFold(mt, ctBase) {
				return f, nil
			}
		}
	}
	return "json", nil
}

func newQueryID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("BUG: no randomness: %v", err))
	}
	return hex.EncodeToString(b[:])
}
