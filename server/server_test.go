package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/server"
)

// fixture is a real server on loopback over a fresh engine, with an admin token,
// two reader tokens and a small events table registered as ev.
type fixture struct {
	t             testing.TB
	url           string
	admin, reader string
	reader2       string
	eng           *lore.Engine
	tokensPath    string
	dir           string // the ev table's directory
	srv           *server.Server
	tokens        *server.TokenStore
	http          *httptest.Server
}

type fixtureOptions struct {
	rows, rowGroupRows    int
	threads               int
	maxRunning, maxQueued int
	serverOpts            server.Options
}

func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	if fo.rows == 0 {
		fo.rows = 20_000
	}
	if fo.rowGroupRows == 0 {
		fo.rowGroupRows = 4096
	}
	home := t.TempDir()
	f := &fixture{t: t, tokensPath: filepath.Join(home, "tokens"), dir: filepath.Join(home, "ev")}
	var err error
	if f.admin, err = server.AddToken(f.tokensPath, lore.Principal{Name: "root", Role: lore.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if f.reader, err = server.AddToken(f.tokensPath, lore.Principal{Name: "ann", Role: lore.RoleReader}); err != nil {
		t.Fatal(err)
	}
	if f.reader2, err = server.AddToken(f.tokensPath, lore.Principal{Name: "bob", Role: lore.RoleReader}); err != nil {
		t.Fatal(err)
	}
	tokens, err := server.LoadTokens(f.tokensPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: int64(fo.rows), Files: 2, Out: f.dir, Seed: 3, RowGroupRows: fo.rowGroupRows}); err != nil {
		t.Fatal(err)
	}
	f.eng, err = lore.Open(context.Background(), lore.Options{Home: home, Threads: fo.threads, NoAutoRefresh: true, GCPercent: -1,
		MaxRunning: fo.maxRunning, MaxQueued: fo.maxQueued})
	if err != nil {
		t.Fatal(err)
	}
	opts := fo.serverOpts
	opts.Engine, opts.Tokens, f.tokens = f.eng, tokens, tokens
	if f.srv, err = server.New(opts); err != nil {
		t.Fatal(err)
	}
	f.http = httptest.NewServer(f.srv.Handler())
	f.url = f.http.URL
	t.Cleanup(func() {
		f.http.Close()
		f.eng.Close()
	})
	f.ok(f.admin, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", f.dir))
	return f
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body is not JSON: %v: %s", r.status, err, r.body)
	}
	return m
}

// code is the error code of an error reply.
func (r reply) code(t testing.TB) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	if e == nil {
		return ""
	}
	return e["code"].(string)
}

func (f *fixture) do(method, path, token string, body any, header ...string) reply {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, f.url+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

// stmt posts a statement as token.
func (f *fixture) stmt(token string, req map[string]any, header ...string) reply {
	f.t.Helper()
	return f.do("POST", "/v1/statement", token, req, header...)
}

// ok runs sql as token and fails the test unless it answers 200.
func (f *fixture) ok(token, sql string) map[string]any {
	f.t.Helper()
	r := f.stmt(token, map[string]any{"sql": sql})
	if r.status != 200 {
		f.t.Fatalf("%s: status %d: %s", sql, r.status, r.body)
	}
	return r.json(f.t)
}

func TestAuthentication(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	endpoints := [][2]string{{"POST", "/v1/statement"}, {"GET", "/v1/queries"}, {"GET", "/v1/queries/x"},
		{"DELETE", "/v1/queries/x"}, {"GET", "/v1/catalog/tables"}, {"GET", "/v1/catalog/tables/ev/version"},
		{"GET", "/v1/catalog/tables/ev/statistics"}}
	for _, ep := range endpoints {
		for _, tok := range []string{"", "lore_not_a_token", f.admin + "x"} {
			r := f.do(ep[0], ep[1], tok, map[string]any{"sql": "SELECT 1"})
			if r.status != 401 || r.code(t) != "UNAUTHENTICATED" || r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with token %q: %d %s", ep[0], ep[1], tok, r.status, r.body)
			}
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := f.do("GET", p, "", nil); r.status != 200 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	// A token added to the file is known after a reload, and a removed one is not.
	tok, err := server.AddToken(f.tokensPath, lore.Principal{Name: "late", Role: lore.RoleReader})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.stmt(tok, map[string]any{"sql": "SELECT 1"}); r.status != 401 {
		t.Fatalf("a token not yet loaded: %d", r.status)
	}
	if err := f.tokens.Reload(); err != nil {
		t.Fatal(err)
	}
	if r := f.stmt(tok, map[string]any{"sql": "SELECT 1"}); r.status != 200 {
		t.Fatalf("a token after reload: %d %s", r.status, r.body)
	}
}

func TestTokensFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	tok, err := server.AddToken(path, lore.Principal{Name: "ci bot", Role: lore.RoleReader})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), tok) || !strings.Contains(string(raw), server.HashToken(tok)) {
		t.Fatalf("the file must hold the hash, never the token: %s", raw)
	}
	s, err := server.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := s.Lookup(tok); !ok || p.Name != "ci bot" || p.Role != lore.RoleReader {
		t.Fatalf("lookup: %v %v", p, ok)
	}
	if _, ok := s.Lookup(tok[:len(tok)-1]); ok {
		t.Fatal("a prefix of a token is no token")
	}
	// A bad edit is refused by Reload and the known tokens stay.
	os.WriteFile(path, append(raw, []byte("sha256:zz admin eve\n")...), 0o600)
	if err := s.Reload(); err == nil || strings.Contains(err.Error(), "zz admin") {
		t.Fatalf("reload of a bad file: %v", err)
	}
	if _, ok := s.Lookup(tok); !ok {
		t.Fatal("a failed reload dropped the tokens")
	}
	os.WriteFile(path, []byte("# nobody\n"), 0o600)
	if err := s.Reload(); err != nil || s.Len() != 0 {
		t.Fatalf("reload: %v, %d tokens", err, s.Len())
	}
	if _, ok := s.Lookup(tok); ok {
		t.Fatal("a removed token still works after reload")
	}
	for _, bad := range []string{"sha256:" + strings.Repeat("a", 64) + " owner x", "plain admin x", "sha256:" + strings.Repeat("a", 64) + " admin"} {
		os.WriteFile(path, []byte(bad+"\n"), 0o600)
		if _, err := server.LoadTokens(path); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func TestRoles(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, sql := range []string{
		"CREATE TABLE x WITH (location = '" + f.dir + "', format = 'parquet')",
		"DROP TABLE ev", "ALTER TABLE ev SET CLUSTERED BY (ts)", "ANALYZE ev",
		"SELECT count(*) FROM '" + f.dir + "'",
	} {
		r := f.stmt(f.reader, map[string]any{"sql": sql})
		if r.status != 403 || r.code(t) != "FORBIDDEN" {
			t.Errorf("reader %s: %d %s", sql, r.status, r.body)
		}
	}
	m := f.ok(f.reader, "SELECT count(*) AS n FROM ev")
	if rows := m["rows"].([]any); rows[0].([]any)[0] != "20000" {
		t.Fatalf("rows %v", rows)
	}
	if rec := m["record"].(map[string]any); rec["subject"] != "ann" || rec["endpoint"] != "http" {
		t.Fatalf("record subject %v, endpoint %v", rec["subject"], rec["endpoint"])
	}
	// Readers read the catalog and freshness endpoints.
	for _, p := range []string{"/v1/catalog/tables", "/v1/catalog/tables/ev/version"} {
		if r := f.do("GET", p, f.reader, nil); r.status != 200 {
			t.Errorf("reader %s: %d %s", p, r.status, r.body)
		}
	}
	// A reader sees and cancels its own statements only; an admin sees all.
	r := f.stmt(f.admin, map[string]any{"sql": "SELECT 1", "query_id": "admins-own"})
	if r.status != 200 {
		t.Fatal(r.status)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if r := f.do(m, "/v1/queries/admins-own", f.reader, nil); r.status != 404 || r.code(t) != "NOT_FOUND" {
			t.Errorf("reader %s of an admin's query: %d %s", m, r.status, r.body)
		}
	}
	if r := f.do("GET", "/v1/queries/admins-own", f.admin, nil); r.status != 200 {
		t.Errorf("admin GET: %d", r.status)
	}
	f.stmt(f.reader, map[string]any{"sql": "SELECT 2", "query_id": "anns-own"})
	list := f.do("GET", "/v1/queries", f.reader, nil).json(t)["queries"].([]any)
	for _, q := range list {
		if q.(map[string]any)["subject"] != "ann" {
			t.Errorf("reader lists another's query: %v", q)
		}
	}
	if r := f.do("GET", "/v1/queries/anns-own", f.reader2, nil); r.status != 404 {
		t.Errorf("another reader GETs ann's query: %d", r.status)
	}
	if r := f.do("GET", "/v1/queries/anns-own", f.admin, nil); r.status != 200 {
		t.Errorf("admin GETs ann's query: %d", r.status)
	}
}

func TestLosslessJSON(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	m := f.ok(f.reader, `SELECT 9007199254740993::BIGINT AS big, 18446744073709551615::UBIGINT AS ubig,
		'12345678901234567890123456789012345678'::HUGEINT AS huge, 12345678901234567.89::DECIMAL(19,2) AS dec,
		'nan'::DOUBLE AS nan, 'inf'::DOUBLE AS pinf, '-inf'::DOUBLE AS ninf, 1.5::DOUBLE AS f, 7::INTEGER AS i,
		TIMESTAMP '2024-02-29 23:59:59.123456' AS ts, TIMESTAMPTZ '2024-02-29 23:59:59.5+00' AS tstz,
		DATE '2024-03-01' AS d, NULL::BIGINT AS n, [1, 2, NULL] AS l, {'a': 1::BIGINT, 'b': 'x'} AS s, 'a"\b' AS str`)
	want := map[string]any{
		"big": "9007199254740993", "ubig": "18446744073709551615",
		"huge": "12345678901234567890123456789012345678", "dec": "12345678901234567.89",
		"nan": "NaN", "pinf": "Infinity", "ninf": "-Infinity", "f": 1.5, "i": 7.0,
		"ts": "2024-02-29T23:59:59.123456", "tstz": "2024-02-29T23:59:59.5Z", "d": "2024-03-01", "n": nil,
		"str": `a"\b`,
	}
	cols := m["columns"].([]any)
	row := m["rows"].([]any)[0].([]any)
	types := map[string]string{}
	for i, c := range cols {
		name := c.(map[string]any)["name"].(string)
		types[name] = c.(map[string]any)["type"].(string)
		if w, ok := want[name]; ok && row[i] != w {
			t.Errorf("%s (%s): %#v, want %#v", name, types[name], row[i], w)
		}
		switch name {
		case "l":
			if got := fmt.Sprint(row[i]); got != "[1 2 <nil>]" {
				t.Errorf("list: %s", got)
			}
		case "s":
			if s := row[i].(map[string]any); s["a"] != "1" || s["b"] != "x" {
				t.Errorf("struct: %v", s)
			}
		}
	}
	if types["big"] != "BIGINT" || types["dec"] != "DECIMAL(19,2)" || types["tstz"] != "TIMESTAMP WITH TIME ZONE" {
		t.Errorf("types %v", types)
	}
}

func TestFormats(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	sql := "SELECT category, count(*) AS n FROM ev GROUP BY category ORDER BY category LIMIT 3"
	checkRecord := func(r reply) {
		t.Helper()
		var rec lore.Record
		if err := json.Unmarshal([]byte(r.header.Get("X-Lore-Record")), &rec); err != nil || rec.Rows != 3 || rec.State != "finished" {
			t.Errorf("X-Lore-Record: %v %+v", err, rec)
		}
		if rec.ID != r.header.Get("X-Lore-Query-Id") {
			t.Errorf("record id %q, header %q", rec.ID, r.header.Get("X-Lore-Query-Id"))
		}
	}
	for _, how := range []struct {
		name   string
		req    map[string]any
		accept string
	}{{"format", map[string]any{"sql": sql, "format": "arrow"}, ""}, {"accept", map[string]any{"sql": sql}, "application/vnd.apache.arrow.stream"}} {
		r := f.stmt(f.reader, how.req, "Accept", how.accept)
		if r.status != 200 || r.header.Get("Content-Type") != "application/vnd.apache.arrow.stream" {
			t.Fatalf("arrow by %s: %d %s", how.name, r.status, r.header.Get("Content-Type"))
		}
		rd, err := ipc.NewReader(bytes.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for rd.Next() {
			n += rd.Record().NumRows()
		}
		if rd.Err() != nil || n != 3 || rd.Schema().Field(1).Name != "n" {
			t.Fatalf("arrow by %s: %v, %d rows, %v", how.name, rd.Err(), n, rd.Schema())
		}
		rd.Release()
		checkRecord(r)
	}
	r := f.stmt(f.reader, map[string]any{"sql": sql, "format": "ndjson"})
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if r.status != 200 || len(lines) != 3 || !strings.HasPrefix(lines[0], `{"category":"cat_00","n":"`) {
		t.Fatalf("ndjson: %d %s", r.status, r.body)
	}
	checkRecord(r)
	r = f.stmt(f.reader, map[string]any{"sql": sql, "format": "csv"})
	lines = strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if r.status != 200 || len(lines) != 4 || lines[0] != "category,n" || !strings.HasPrefix(lines[1], "cat_00,") {
		t.Fatalf("csv: %d %s", r.status, r.body)
	}
	checkRecord(r)
	// Decimals held in 64 bits go to Arrow clients as 128-bit decimals.
	r = f.stmt(f.reader, map[string]any{"sql": "SELECT CAST(12.5 AS DECIMAL(10,2)) AS d", "format": "arrow"})
	rd, err := ipc.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if !rd.Next() || rd.Schema().Field(0).Type.ID() != arrow.DECIMAL128 || rd.Record().Column(0).ValueStr(0) != "12.5" {
		t.Fatalf("a DECIMAL(10,2) over Arrow: %v %v", rd.Schema(), rd.Err())
	}
	rd.Release()
	// A record with text beyond ASCII still reads back from its header.
	r = f.stmt(f.reader, map[string]any{"sql": "SELECT 'é𝄞' AS s", "format": "csv"})
	var rec lore.Record
	if err := json.Unmarshal([]byte(r.header.Get("X-Lore-Record")), &rec); err != nil || rec.SQL != "SELECT 'é𝄞' AS s" {
		t.Fatalf("record header %q: %v", r.header.Get("X-Lore-Record"), err)
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t, fixtureOptions{serverOpts: server.Options{MaxBodyBytes: 4096, MaxStatementBytes: 1000}})
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"syntax", map[string]any{"sql": "SELECT 1 FROM"}, 400, "SYNTAX_ERROR"},
		{"analysis", map[string]any{"sql": "SELECT nope FROM ev"}, 400, "ANALYSIS_ERROR"},
		{"no table", map[string]any{"sql": "SELECT * FROM missing"}, 404, "TABLE_NOT_FOUND"},
		{"bad setting", map[string]any{"sql": "SELECT 1", "settings": map[string]any{"use_statistics": "maybe"}}, 400, "INVALID_SETTING"},
		{"unknown setting", map[string]any{"sql": "SELECT 1", "settings": map[string]any{"nope": true}}, 400, "INVALID_SETTING"},
		{"setting not scalar", map[string]any{"sql": "SELECT 1", "settings": map[string]any{"approximate": []int{1}}}, 400, "INVALID_SETTING"},
		{"no sql", map[string]any{"format": "json"}, 400, "INVALID_REQUEST"},
		{"not json", "SELECT 1", 400, "INVALID_REQUEST"},
		{"two values", `{"sql":"SELECT 1"} {}`, 400, "INVALID_REQUEST"},
		{"unknown field", map[string]any{"sql": "SELECT 1", "expect_source_version": "x"}, 400, "INVALID_REQUEST"},
		{"unknown format", map[string]any{"sql": "SELECT 1", "format": "xml"}, 400, "INVALID_REQUEST"},
		{"bad query id", map[string]any{"sql": "SELECT 1", "query_id": "a/b"}, 400, "INVALID_REQUEST"},
		{"long statement", map[string]any{"sql": "SELECT 1" + strings.Repeat(" ", 1000)}, 400, "INVALID_REQUEST"},
		{"large body", map[string]any{"sql": "SELECT '" + strings.Repeat("x", 5000) + "'"}, 413, "REQUEST_TOO_LARGE"},
	} {
		r := f.do("POST", "/v1/statement", f.admin, c.body)
		if r.status != c.status || r.code(t) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
		}
	}
	// A syntax error says where, and its record is in the reply and the log.
	r := f.stmt(f.admin, map[string]any{"sql": "SELECT 1 FROM", "query_id": "bad-1"})
	m := r.json(t)
	if e := m["error"].(map[string]any); e["position"] == nil || m["query_id"] != "bad-1" {
		t.Errorf("syntax error reply: %s", r.body)
	}
	if rec, _ := m["record"].(map[string]any); rec == nil || rec["state"] != "failed" {
		t.Errorf("failed record: %s", r.body)
	}
	if q := f.do("GET", "/v1/queries/bad-1", f.admin, nil).json(t); q["state"] != "FAILED" {
		t.Errorf("state of a failed query: %v", q)
	}
	for _, p := range []string{"/v2/statement", "/v1/queries/nope", "/v1/catalog/tables/nope/version"} {
		if r := f.do("GET", p, f.admin, nil); r.status != 404 {
			t.Errorf("GET %s: %d %s", p, r.status, r.body)
		}
	}
}
