package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/loredb/lore"
	"github.com/loredb/lore/server"
)

// post sends a statement request and returns the response unread: streamed results
// are read as they come.
func (f *fixture) post(ctx context.Context, token string, req map[string]any) *http.Response {
	f.t.Helper()
	body, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, "POST", f.url+"/v1/statement", bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// jsonPage is one page of a json result.
type jsonPage struct {
	QueryID string          `json:"query_id"`
	Rows    [][]any         `json:"rows"`
	NextURI string          `json:"next_uri"`
	Record  *lore.Record    `json:"record"`
	Error   json.RawMessage `json:"error"`
}

func (r reply) page(t testing.TB) jsonPage {
	t.Helper()
	var p jsonPage
	if r.status != 200 {
		t.Fatalf("page: status %d: %.300s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("page: %v", err)
	}
	return p
}

// noOpenResults waits until the server holds no paged result: a result is
// forgotten just after its statement is seen to end.
func (f *fixture) noOpenResults() {
	f.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); f.srv.OpenResults() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			f.t.Fatalf("%d paged results still open", f.srv.OpenResults())
		}
	}
}

// heapSampler samples the process's HeapInuse until stopped and keeps the peak: the
// server runs in this process, so the peak bounds what it held.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > h.peak.Load() {
				h.peak.Store(ms.HeapInuse)
			}
			select {
			case <-h.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return h
}

func (h *heapSampler) end() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

// TestPaging reads a range() result of n rows a page at a time, checking the count
// and the sum, while the process's heap stays far below what the materialised
// result would take. The 10M-row form runs without -short; -short reads 200k rows.
func TestPaging(t *testing.T) {
	n, pageRows := 10_000_000, 25_000
	if testing.Short() {
		n, pageRows = 200_000, 5_000
	}
	f := newFixture(t, fixtureOptions{rows: 1000})
	// Four 8-byte columns: 320 MB for 10M rows held whole, past the bound below.
	sql := "SELECT range AS v, range + 1 AS w, range * 2 AS x, range / 2 AS y FROM range(" + strconv.Itoa(n) + ")"
	runtime.GC()
	heap := sampleHeap()
	r := f.stmt(f.reader, map[string]any{"sql": sql, "page_rows": pageRows, "query_id": "big"})
	p := r.page(t)
	first := p.NextURI
	if first == "" || p.Record != nil {
		t.Fatalf("first page: next_uri %q, record %v", p.NextURI, p.Record)
	}
	// While pages remain the statement is RUNNING; another reader cannot read them.
	if m := f.do("GET", "/v1/queries/big", f.reader, nil).json(t); m["state"] != "RUNNING" {
		t.Errorf("state while pages remain: %v", m["state"])
	}
	if r := f.do("GET", first, f.reader2, nil); r.status != 404 {
		t.Errorf("another reader's page: %d", r.status)
	}
	var rows, sum int64
	pages := 0
	for {
		pages++
		if len(p.Rows) > pageRows {
			t.Fatalf("page %d has %d rows, over page_rows %d", pages, len(p.Rows), pageRows)
		}
		for _, row := range p.Rows {
			v, err := strconv.ParseInt(row[0].(string), 10, 64)
			if err != nil || len(row) != 4 || row[1] != strconv.FormatInt(v+1, 10) || row[3] != float64(v)*0.5 {
				t.Fatalf("row %v: %v", row, err)
			}
			rows++
			sum += v
		}
		if p.NextURI == "" {
			break
		}
		prev := p.NextURI
		p = f.do("GET", p.NextURI, f.reader, nil).page(t)
		if pages == 1 {
			// A page token is used once.
			if r := f.do("GET", prev, f.reader, nil); r.status != 404 || r.code(t) != "NOT_FOUND" {
				t.Errorf("a used page token: %d %s", r.status, r.body)
			}
		}
	}
	peak := heap.end()
	want := int64(n) * int64(n-1) / 2
	if rows != int64(n) || sum != want {
		t.Fatalf("%d rows summing to %d in %d pages, want %d rows summing to %d", rows, sum, pages, n, want)
	}
	if p.Record == nil || p.Record.Rows != int64(n) || p.Record.State != "finished" {
		t.Fatalf("last page's record: %+v", p.Record)
	}
	if m := f.do("GET", "/v1/queries/big", f.reader, nil).json(t); m["state"] != "FINISHED" {
		t.Errorf("state after the last page: %v", m["state"])
	}
	t.Logf("%d rows in %d pages; peak HeapInuse %d MiB", rows, pages, peak>>20)
	if peak > 256<<20 {
		t.Fatalf("peak HeapInuse %d MiB while paging: the result was held whole", peak>>20)
	}
	f.noOpenResults()
}

// TestPagingSmallAndLimits: a result within one page has no next_uri and carries its
// record; page bounds outside the server's maxima are refused; page_bytes pages too.
func TestPagingSmallAndLimits(t *testing.T) {
	f := newFixture(t, fixtureOptions{rows: 1000, serverOpts: server.Options{MaxPageRows: 1000}})
	p := f.stmt(f.reader, map[string]any{"sql": "SELECT * FROM range(10)"}).page(t)
	if p.NextURI != "" || p.Record == nil || len(p.Rows) != 10 {
		t.Fatalf("small result: %+v", p)
	}
	for _, req := range []map[string]any{
		{"sql": "SELECT 1", "page_rows": 1001},
		{"sql": "SELECT 1", "page_rows": -1},
		{"sql": "SELECT 1", "page_bytes": 1 << 40},
		{"sql": "SELECT 1", "page_rows": 5, "format": "csv"},
	} {
		if r := f.stmt(f.reader, req); r.status != 400 || r.code(t) != "INVALID_REQUEST" {
			t.Errorf("%v: %d %s", req, r.status, r.body)
		}
	}
	// page_bytes bounds a page by its JSON: about 100 bytes is a dozen rows of this.
	p = f.stmt(f.reader, map[string]any{"sql": "SELECT * FROM range(1000)", "page_bytes": 100}).page(t)
	if p.NextURI == "" || len(p.Rows) < 1 || len(p.Rows) > 30 {
		t.Fatalf("page_bytes 100: %d rows, next %q", len(p.Rows), p.NextURI)
	}
	total := len(p.Rows)
	for p.NextURI != "" {
		p = f.do("GET", p.NextURI, f.reader, nil).page(t)
		total += len(p.Rows)
	}
	if total != 1000 {
		t.Fatalf("%d rows", total)
	}
}

// TestPagingExpiry: a result whose next page is not asked for within the idle
// timeout is canceled (record CANCELED) and its next_uri is 410 RESULT_EXPIRED.
func TestPagingExpiry(t *testing.T) {
	f := newFixture(t, fixtureOptions{rows: 1000, serverOpts: server.Options{ResultIdleTimeout: 100 * time.Millisecond}})
	p := f.stmt(f.reader, map[string]any{"sql": "SELECT * FROM range(5000000)", "page_rows": 1000, "query_id": "idle"}).page(t)
	if p.NextURI == "" {
		t.Fatal("no next_uri")
	}
	state, rec := f.waitEnded("idle")
	if state != "CANCELED" || rec == nil || rec["state"] != "failed" || rec["error"].(map[string]any)["code"] != "CANCELED" {
		t.Fatalf("expired: state %s, record %v", state, rec)
	}
	r := f.do("GET", p.NextURI, f.reader, nil)
	if r.status != 410 || r.code(t) != "RESULT_EXPIRED" {
		t.Fatalf("next_uri of an expired result: %d %s", r.status, r.body)
	}
	f.noOpenResults()
}

// TestPagingCancelAndCap: DELETE cancels a paged result (its next page is 499
// CANCELED); past MaxOpenResults a result that would page is 503.
func TestPagingCancelAndCap(t *testing.T) {
	f := newFixture(t, fixtureOptions{rows: 1000, serverOpts: server.Options{MaxOpenResults: 1}})
	p := f.stmt(f.reader, map[string]any{"sql": "SELECT * FROM range(1000000)", "page_rows": 10, "query_id": "p1"}).page(t)
	r := f.stmt(f.reader, map[string]any{"sql": "SELECT * FROM range(1000000)", "page_rows": 10, "query_id": "p2"})
	if r.status != 503 || r.code(t) != "RESOURCE_EXHAUSTED" || r.header.Get("Retry-After") == "" {
		t.Fatalf("past the open-result cap: %d %s", r.status, r.body)
	}
	// A result within one page is not held back by the cap.
	if r := f.stmt(f.reader, map[string]any{"sql": "SELECT 1"}); r.status != 200 {
		t.Fatalf("small result at the cap: %d", r.status)
	}
	if r := f.do("DELETE", "/v1/queries/p1", f.reader, nil); r.status != 202 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if state, _ := f.waitEnded("p1"); state != "CANCELED" {
		t.Fatalf("state %s", state)
	}
	if r := f.do("GET", p.NextURI, f.reader, nil); r.status != 499 || r.code(t) != "CANCELED" {
		t.Fatalf("next page of a canceled result: %d %s", r.status, r.body)
	}
	f.noOpenResults()
	// Shutdown closes the results still open.
	p = f.stmt(f.reader, map[string]any{"sql": "SELECT * FROM range(1000000)", "page_rows": 10, "query_id": "p3"}).page(t)
	if n := f.srv.CloseResults(); n != 1 {
		t.Fatalf("CloseResults closed %d", n)
	}
	if state, _ := f.waitEnded("p3"); state != "CANCELED" {
		t.Fatalf("after CloseResults: state %s", state)
	}
	if r := f.do("GET", p.NextURI, f.reader, nil); r.status != 499 {
		t.Fatalf("next page after CloseResults: %d %s", r.status, r.body)
	}
}

// TestStreamArrow reads a large arrow result as it streams, with arrow-go's reader,
// and finds the record in the trailer.
func TestStreamArrow(t *testing.T) {
	f := newFixture(t, fixtureOptions{rows: 1000})
	n := 2_000_000
	resp := f.post(context.Background(), f.reader, map[string]any{"sql": "SELECT range AS v, range * 0.5 AS d FROM range(" + strconv.Itoa(n) + ")", "format": "arrow"})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Lore-Record") != "" {
		t.Fatalf("status %d, record header %q (a result that began before it was complete has none)", resp.StatusCode, resp.Header.Get("X-Lore-Record"))
	}
	rd, err := ipc.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var rows, sum int64
	for rd.Next() {
		b := rd.RecordBatch()
		vs := b.Column(0).(*array.Int64)
		for i := 0; i < vs.Len(); i++ {
			sum += vs.Value(i)
		}
		rows += b.NumRows()
	}
	if rd.Err() != nil || rows != int64(n) || sum != int64(n)*int64(n-1)/2 {
		t.Fatalf("%v: %d rows, sum %d", rd.Err(), rows, sum)
	}
	io.Copy(io.Discard, resp.Body)
	var rec lore.Record
	if err := json.Unmarshal([]byte(resp.Trailer.Get("X-Lore-Record")), &rec); err != nil || rec.Rows != int64(n) || rec.State != "finished" {
		t.Fatalf("trailer %q: %v", resp.Trailer.Get("X-Lore-Record"), err)
	}
}

// lateErrors are statements that fail after their stream has begun: a guardrail
// past half a million rows, and a cast that fails on one late row only.
var lateErrors = []struct {
	name, sql, code string
	settings        map[string]any
}{
	{"max_result_rows", "SELECT range AS v FROM range(1000000)", "RESOURCE_EXHAUSTED", map[string]any{"max_result_rows": 500000}},
	{"late cast", "SELECT CAST(CASE WHEN range = 900000 THEN 'x' ELSE '1' END AS INTEGER) AS v FROM range(1000000)", "ANALYSIS_ERROR", nil},
}

// TestStreamErrorMidStream: a statement that fails after its stream began never
// gives a complete-looking result: the response is cut (every client sees an
// unexpected end), ndjson's last line is the error, arrow has no end-of-stream.
func TestStreamErrorMidStream(t *testing.T) {
	f := newFixture(t, fixtureOptions{rows: 1000})
	for _, le := range lateErrors {
		for _, format := range []string{"arrow", "ndjson", "csv"} {
			t.Run(le.name+"/"+format, func(t *testing.T) {
				resp := f.post(context.Background(), f.reader, map[string]any{"sql": le.sql, "format": format, "settings": le.settings})
				defer resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: the error came before the stream began", resp.StatusCode)
				}
				if format == "arrow" {
					rd, err := ipc.NewReader(resp.Body)
					if err != nil {
						t.Fatal(err)
					}
					for rd.Next() {
					}
					if rd.Err() == nil {
						t.Fatal("arrow: the reader saw a complete stream")
					}
					return
				}
				body, err := io.ReadAll(resp.Body)
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("%s: reading the body: %v (want an unexpected EOF)", format, err)
				}
				if format == "ndjson" {
					lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
					var last struct {
						Error struct{ Code string } `json:"error"`
					}
					if json.Unmarshal([]byte(lines[len(lines)-1]), &last); last.Error.Code != le.code {
						t.Fatalf("ndjson's last line %q", lines[len(lines)-1])
					}
				}
			})
		}
	}
	// An error before the stream begins is JSON with its status.
	r := f.stmt(f.reader, map[string]any{"sql": "SELECT * FROM range(100)", "format": "csv", "settings": map[string]any{"max_result_rows": 10}})
	if r.status != 503 || r.code(t) != "RESOURCE_EXHAUSTED" || r.json(t)["record"] == nil {
		t.Fatalf("early error: %d %s", r.status, r.body)
	}
}

// TestStreamDisconnect: a client that stops reading and goes away cancels the
// statement, and the scan stops before it read the table.
func TestStreamDisconnect(t *testing.T) {
	const rows = 300_000
	f := newFixture(t, fixtureOptions{rows: rows, rowGroupRows: 4096, threads: 1})
	ctx, cancel := context.WithCancel(context.Background())
	resp := f.post(ctx, f.reader, map[string]any{"sql": "SELECT * FROM ev", "format": "ndjson", "query_id": "leaver"})
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "{") {
		t.Fatalf("first line %q: %v", line, err)
	}
	cancel()
	resp.Body.Close()
	state, rec := f.waitEnded("leaver")
	if state != "CANCELED" || rec == nil {
		t.Fatalf("state %s, record %v", state, rec)
	}
	if n := rowsScanned(rec); n >= rows {
		t.Fatalf("the scan read %v of %d rows after the client left", n, rows)
	} else {
		t.Logf("the scan read %v of %d rows", n, rows)
	}
}

// TestStreamStalledReader: a client that keeps its connection but stops reading has
// its response cut after the idle timeout, and its statement is canceled rather than
// held.
func TestStreamStalledReader(t *testing.T) {
	f := newFixture(t, fixtureOptions{rows: 1000, serverOpts: server.Options{ResultIdleTimeout: 200 * time.Millisecond}})
	resp := f.post(context.Background(), f.reader, map[string]any{"sql": "SELECT * FROM range(100000000)", "format": "csv", "query_id": "stall"})
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// Read nothing more: the socket buffers fill and the server's write waits.
	state, rec := f.waitEnded("stall")
	if state != "CANCELED" || rec["error"].(map[string]any)["code"] != "CANCELED" {
		t.Fatalf("state %s, record %v", state, rec)
	}
	// A stream read to its end leaves no deadline on its connection: the next
	// request on it, after longer than the timeout, is answered.
	for i := 0; i < 2; i++ {
		r := f.post(context.Background(), f.reader, map[string]any{"sql": "SELECT * FROM range(1000000)", "format": "csv"})
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil || r.StatusCode != 200 || len(body) < 1000000 {
			t.Fatalf("request %d on a kept-alive connection: %d %v", i, r.StatusCode, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestStreamResultCache: a repeated small statement is answered from the cache,
// streamed or paged; a result too large for the cache is never kept.
func TestStreamResultCache(t *testing.T) {
	f := newFixture(t, fixtureOptions{rows: 1000})
	small := "SELECT category, count(*) AS n FROM ev GROUP BY category ORDER BY category"
	modeOf := func(format, sql string) string {
		t.Helper()
		resp := f.post(context.Background(), f.reader, map[string]any{"sql": sql, "format": format})
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", sql, resp.StatusCode, err)
		}
		var rec lore.Record
		doc := resp.Trailer.Get("X-Lore-Record")
		if format == "json" {
			var p jsonPage
			json.Unmarshal(body, &p)
			if p.Record == nil {
				t.Fatalf("json page without a record: %.200s", body)
			}
			rec = *p.Record
		} else if err := json.Unmarshal([]byte(doc), &rec); err != nil {
			t.Fatalf("record trailer %q: %v", doc, err)
		}
		return rec.Execution.Mode
	}
	if m := modeOf("ndjson", small); m != "scan" {
		t.Fatalf("first run: mode %s", m)
	}
	for _, format := range []string{"ndjson", "arrow", "csv", "json"} {
		if m := modeOf(format, small); m != "cache" {
			t.Errorf("%s repeat: mode %s", format, m)
		}
	}
	huge := "SELECT range AS v FROM range(12000000)"
	modeOf("arrow", huge)
	if m := modeOf("arrow", huge); m == "cache" {
		t.Fatalf("a result of 96 MB came from the cache")
	}
}
