package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
)

// remote runs statements on a lore serve over HTTP (lore sql --server): it asks for
// the Arrow format, so the result reaches the same formatters as a local one, and
// turns the server's error body back into a coded error with its position.
type remote struct {
	base   string
	token  string
	client *http.Client
}

var _ querier = (*remote)(nil)

func newRemote(base, token string) *remote {
	return &remote{base: strings.TrimRight(base, "/"), token: token, client: &http.Client{}}
}

// Query posts one request; canceling ctx drops the connection, which cancels the
// statement on the server.
func (r *remote) Query(ctx context.Context, sqlText string, settings map[string]string) (*lore.Result, error) {
	body, err := json.Marshal(map[string]any{"sql": sqlText, "settings": settings, "format": "arrow"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", r.base+"/v1/statement", bytes.NewReader(body))
	if err != nil {
		return nil, errs.New(errs.InvalidRequest, "--server %q: %v", r.base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errs.New(errs.Canceled, "statement canceled: %w", ctx.Err())
		}
		return nil, errs.New(errs.SourceUnavailable, "cannot reach the server %s: %v", r.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, remoteError(resp)
	}
	res, err := readArrow(resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errs.New(errs.Canceled, "statement canceled: %w", ctx.Err())
		}
		return nil, errs.New(errs.Internal, "the server's Arrow result does not read: %v", err)
	}
	// The record travels in a header, or in a trailer once the body is read.
	rec := resp.Header.Get("X-Lore-Record")
	if rec == "" {
		rec = resp.Trailer.Get("X-Lore-Record")
	}
	if rec != "" {
		var r lore.Record
		if json.Unmarshal([]byte(rec), &r) == nil {
			res.Record = &r
		}
	}
	return res, nil
}

// readArrow reads an Arrow IPC stream whole; the batches outlive the reader.
func readArrow(body io.Reader) (*lore.Result, error) {
	rd, err := ipc.NewReader(body)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	res := &lore.Result{Schema: rd.Schema()}
	for rd.Next() {
		b := rd.RecordBatch()
		b.Retain()
		res.Batches = append(res.Batches, b)
	}
	if err := rd.Err(); err != nil {
		for _, b := range res.Batches {
			b.Release()
		}
		return nil, err
	}
	if res.Batches == nil {
		res.Batches = []arrow.Record{}
	}
	return res, nil
}

// remoteError is the coded error of a response that is not 200: the server's
// {"error": {"code", "message", "position"}}, or the status itself.
func remoteError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body struct {
		Error *struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			Position *int   `json:"position"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &body) != nil || body.Error == nil || body.Error.Code == "" {
		return errs.New(errs.Internal, "the server answered %s", resp.Status)
	}
	e := body.Error
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			e.Message += fmt.Sprintf(" (retry after %s s)", ra)
		}
	}
	if e.Position != nil {
		return errs.At(errs.Code(e.Code), *e.Position, "%s", e.Message)
	}
	return errs.New(errs.Code(e.Code), "%s", e.Message)
}
