package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// remote is a querier that sends each request to a Lore server (lore serve) and
// reads its result as an Arrow stream, so that the shell and scripts print a remote
// result exactly as a local one.
type remote struct {
	base   string // the server's URL, without a trailing slash
	token  string
	client *http.Client
}

var _ querier = (*remote)(nil)

// newRemote checks a server URL and returns its client.
func newRemote(server, token string) (*remote, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server %q is not an http:// or https:// URL", server)
	}
	return &remote{base: strings.TrimRight(server, "/"), token: token, client: &http.Client{}}, nil
}

// Query posts one request and reads its Arrow result; a failure is the server's
// coded error, with its position in sqlText.
func (r *remote) Query(ctx context.Context, sqlText string, settings map[string]string) (*lore.Result, error) {
	body, err := json.Marshal(struct {
		SQL      string            `json:"sql"`
		Settings map[string]string `json:"settings,omitempty"`
		Format   string            `json:"format"`
	}{sqlText, settings, "arrow"})
	if err != nil {
		return nil, errs.New(errs.Internal, "cannot encode the request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/v1/statement", bytes.NewReader(body))
	if err != nil {
		return nil, errs.New(errs.InvalidRequest, "cannot make the request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/vnd.apache.arrow.stream")
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errs.New(errs.Canceled, "statement canceled: %w", ctx.Err())
		}
		return nil, errs.New(errs.SourceUnavailable, "cannot reach the server at %s: %w", r.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, serverError(resp)
	}
	rd, err := ipc.NewReader(resp.Body)
	if err != nil {
		return nil, r.streamError(resp, err)
	}
	defer rd.Release()
	res := &lore.Result{Schema: rd.Schema()}
	res.Batches = []arrow.Record{}
	for rd.Next() {
		rec := rd.RecordBatch()
		rec.Retain()
		res.Batches = append(res.Batches, rec)
	}
	if err := rd.Err(); err != nil {
		for _, b := range res.Batches {
			b.Release()
		}
		return nil, r.streamError(resp, err)
	}
	// The trailer is read once the body is.
	io.Copy(io.Discard, resp.Body)
	res.Record = recordOf(resp)
	return res, nil
}

// wireError is the error object of the server's responses.
type wireError struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Position *int   `json:"position"`
}

func (w wireError) err() error {
	code := errs.Code(w.Code)
	if code == "" {
		code = errs.Internal
	}
	if w.Position != nil {
		return errs.At(code, *w.Position, "%s", w.Message)
	}
	return errs.New(code, "%s", w.Message)
}

// retryAfter adds a busy server's Retry-After to its error's message.
func (w *wireError) retryAfter(resp *http.Response) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		w.Message += fmt.Sprintf(" (retry after %s s)", ra)
	}
}

// serverError is the coded error of a response that is not a result.
func serverError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var doc struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(b, &doc) == nil && doc.Error != nil {
		doc.Error.retryAfter(resp)
		return doc.Error.err()
	}
	return errs.New(errs.Internal, "the server answered %s: %.200s", resp.Status, b)
}

// streamError is the error of a result stream that broke off after it began: the
// server cuts such a response (an aborted response sends no trailer), and its
// statement's error is what GET /v1/queries/{id} says of it.
func (r *remote) streamError(resp *http.Response, cause error) error {
	io.Copy(io.Discard, resp.Body)
	if id := resp.Header.Get("X-Lore-Query-Id"); id != "" {
		if err := r.queryError(id); err != nil {
			return err
		}
	}
	if errors.Is(cause, io.ErrUnexpectedEOF) || errors.Is(cause, io.EOF) {
		return errs.New(errs.SourceUnavailable, "the server's result ended before it was complete: %w", cause)
	}
	return errs.New(errs.Internal, "cannot read the server's result: %w", cause)
}

// queryError is the coded error statement id ended with, or nil when the server
// cannot say.
func (r *remote) queryError(id string) error {
	req, err := http.NewRequest(http.MethodGet, r.base+"/v1/queries/"+url.PathEscape(id), nil)
	if err != nil {
		return nil
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var info struct {
		Error *wireError `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&info) != nil || info.Error == nil {
		return nil
	}
	return info.Error.err()
}

// recordOf decodes the query record a result carries in its trailer or header.
func recordOf(resp *http.Response) *lore.Record {
	for _, h := range []http.Header{resp.Trailer, resp.Header} {
		if v := h.Get("X-Lore-Record"); v != "" {
			var rec lore.Record
			if json.Unmarshal([]byte(v), &rec) == nil {
				return &rec
			}
		}
	}
	return nil
}
