package flight_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/server"
	loreflight "github.com/loredb/lore/server/flight"
)

// fixture is a real Flight SQL server on a loopback port over a fresh engine with a
// small events table ev, an admin and a reader token, and a client connected to it.
type fixture struct {
	t             testing.TB
	eng           *lore.Engine
	srv           *loreflight.Server
	client        *flightsql.Client
	admin, reader string
	home          string
}

func newFixture(t testing.TB, opts loreflight.Options) *fixture {
	t.Helper()
	home := t.TempDir()
	f := &fixture{t: t, home: home}
	tokensPath := filepath.Join(home, "tokens")
	var err error
	if f.admin, err = server.AddToken(tokensPath, lore.Principal{Name: "root", Role: lore.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if f.reader, err = server.AddToken(tokensPath, lore.Principal{Name: "ann", Role: lore.RoleReader}); err != nil {
		t.Fatal(err)
	}
	tokens, err := server.LoadTokens(tokensPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "ev")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 20_000, Files: 2, Out: dir, Seed: 3, RowGroupRows: 4096}); err != nil {
		t.Fatal(err)
	}
	if f.eng, err = lore.Open(context.Background(), lore.Options{Home: home, NoAutoRefresh: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Query(context.Background(), fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir), nil); err != nil {
		t.Fatal(err)
	}
	opts.Engine, opts.Tokens = f.eng, tokens
	if f.srv, err = loreflight.New(opts); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := f.srv.GRPCServer()
	go gs.Serve(ln)
	if f.client, err = flightsql.NewClient(ln.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.client.Close()
		gs.Stop()
		f.srv.Close()
		f.eng.Close()
	})
	return f
}

// as is a context whose calls carry token.
func as(token string) context.Context {
	ctx := context.Background()
	if token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// fetched is everything DoGet gave for a FlightInfo: its batches (retained) and the
// app_metadata of each FlightData that had one.
type fetched struct {
	schema   *arrow.Schema
	batches  []arrow.RecordBatch
	metadata [][]byte
	lastMeta []byte // app_metadata of the last FlightData
}

func (r *fetched) rows() int64 {
	var n int64
	for _, b := range r.batches {
		n += b.NumRows()
	}
	return n
}

// fetch reads every endpoint's stream of info.
func (f *fixture) fetch(ctx context.Context, info *flight.FlightInfo) *fetched {
	f.t.Helper()
	out := &fetched{}
	for _, ep := range info.Endpoint {
		rdr, err := f.client.DoGet(ctx, ep.Ticket)
		if err != nil {
			f.t.Fatalf("DoGet: %v", err)
		}
		out.schema = rdr.Schema()
		for rdr.Next() {
			b := rdr.RecordBatch()
			b.Retain()
			out.batches = append(out.batches, b)
			out.lastMeta = rdr.LatestAppMetadata()
			if m := out.lastMeta; len(m) > 0 {
				out.metadata = append(out.metadata, m)
			}
		}
		if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
			f.t.Fatalf("reading the stream: %v", err)
		}
		rdr.Release()
	}
	return out
}

// query executes text as token and fetches its result.
func (f *fixture) query(token, text string) (*flight.FlightInfo, *fetched) {
	f.t.Helper()
	ctx := as(token)
	info, err := f.client.Execute(ctx, text)
	if err != nil {
		f.t.Fatalf("%s: %v", text, err)
	}
	return info, f.fetch(ctx, info)
}

// wantStatus fails unless err is a gRPC status of code whose message starts with
// the Lore code loreCode and whose ErrorInfo names it.
func wantStatus(t testing.TB, what string, err error, code codes.Code, loreCode string) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		t.Fatalf("%s: want %s, got %v", what, code, err)
	}
	if !strings.HasPrefix(st.Message(), loreCode+": ") {
		t.Fatalf("%s: message %q does not start with %s", what, st.Message(), loreCode)
	}
	var reason string
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			reason = info.Reason
		}
	}
	if reason != loreCode {
		t.Fatalf("%s: ErrorInfo reason %q, want %s", what, reason, loreCode)
	}
	return st
}

func TestStatementQuery(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	info, res := f.query(f.reader, "SELECT category, count(*) AS n FROM ev GROUP BY category ORDER BY category")
	if len(info.Endpoint) != 1 || info.Endpoint[0].ExpirationTime == nil {
		t.Fatalf("endpoints: %v", info.Endpoint)
	}
	// The FlightInfo's schema is the result's own.
	schema, err := flight.DeserializeSchema(info.Schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !schema.Equal(res.schema) || schema.NumFields() != 2 || schema.Field(1).Name != "n" {
		t.Fatalf("FlightInfo schema %v, stream schema %v", schema, res.schema)
	}
	var total int64
	var actions []string
	for _, b := range res.batches {
		for i := 0; i < int(b.NumRows()); i++ {
			actions = append(actions, b.Column(0).ValueStr(i))
			total += b.Column(1).(*array.Int64).Value(i)
		}
	}
	if total != 20_000 || len(actions) < 2 || info.TotalRecords != int64(len(actions)) {
		t.Fatalf("groups %v sum %d (TotalRecords %d)", actions, total, info.TotalRecords)
	}
	// The ticket's handle is the statement's query id: the query log has it, with the
	// token's name as its subject.
	tq, err := flightsql.GetStatementQueryTicket(info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.eng.LoggedRecord(context.Background(), string(tq.GetStatementHandle()))
	if err != nil || rec.Subject != "ann" || rec.Endpoint != "flight" || rec.State != "finished" {
		t.Fatalf("query log: %+v %v", rec, err)
	}
}

func TestTicketIsFetchedOnceByItsOwner(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	info, err := f.client.Execute(as(f.reader), "SELECT 1 AS x")
	if err != nil {
		t.Fatal(err)
	}
	tk := info.Endpoint[0].Ticket
	// Another principal does not find it (and does not consume it).
	if _, err := readAll(f.client, as(f.admin), tk); status.Code(err) != codes.NotFound {
		t.Fatalf("another's ticket: %v", err)
	}
	if _, err := readAll(f.client, as(f.reader), tk); err != nil {
		t.Fatalf("owner's fetch: %v", err)
	}
	_, err = readAll(f.client, as(f.reader), tk)
	wantStatus(t, "second fetch", err, codes.NotFound, "NOT_FOUND")
	if n := f.srv.Waiting(); n != 0 {
		t.Fatalf("%d results still held", n)
	}
}

func TestTicketExpires(t *testing.T) {
	f := newFixture(t, loreflight.Options{TicketTTL: 50 * time.Millisecond})
	info, err := f.client.Execute(as(f.admin), "SELECT 1 AS x")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.srv.Waiting() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f.srv.Waiting() != 0 {
		t.Fatal("the unfetched result is still held")
	}
	_, err = readAll(f.client, as(f.admin), info.Endpoint[0].Ticket)
	wantStatus(t, "expired ticket", err, codes.NotFound, "NOT_FOUND")
}

func TestTicketsAreBounded(t *testing.T) {
	f := newFixture(t, loreflight.Options{MaxTickets: 2})
	for i := 0; i < 2; i++ {
		if _, err := f.client.Execute(as(f.admin), "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := f.client.Execute(as(f.admin), "SELECT 1")
	wantStatus(t, "third waiting result", err, codes.ResourceExhausted, "RESOURCE_EXHAUSTED")
}

// readAll reads one ticket's stream to its end and counts its rows.
func readAll(c *flightsql.Client, ctx context.Context, tk *flight.Ticket) (int64, error) {
	rdr, err := c.DoGet(ctx, tk)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	var n int64
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return n, err
	}
	return n, nil
}

func TestPreparedStatement(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	ctx := as(f.reader)
	prep, err := f.client.Prepare(ctx, "SELECT count(*) AS n FROM ev WHERE status = 200")
	if err != nil {
		t.Fatal(err)
	}
	if ps := prep.ParameterSchema(); ps != nil && ps.NumFields() != 0 {
		t.Fatalf("parameter schema %v", ps)
	}
	var counts []int64
	for i := 0; i < 2; i++ { // executed twice: a prepared statement outlives its executions
		info, err := prep.Execute(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res := f.fetch(ctx, info)
		if res.rows() != 1 {
			t.Fatalf("rows %d", res.rows())
		}
		counts = append(counts, res.batches[0].Column(0).(*array.Int64).Value(0))
	}
	if counts[0] != counts[1] || counts[0] <= 0 || counts[0] >= 20_000 {
		t.Fatalf("counts %v", counts)
	}
	// Another principal cannot execute it by its handle.
	other, err := f.client.LoadPreparedStatementFromResult(&flightsql.CreatePreparedStatementResult{PreparedStatementHandle: prep.Handle()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Execute(as(f.admin)); status.Code(err) != codes.NotFound {
		t.Fatalf("another's prepared statement: %v", err)
	}
	if err := prep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	reopened, _ := f.client.LoadPreparedStatementFromResult(&flightsql.CreatePreparedStatementResult{PreparedStatementHandle: prep.Handle()})
	_, err = reopened.Execute(ctx)
	wantStatus(t, "closed prepared statement", err, codes.NotFound, "NOT_FOUND")
	// A syntax error is reported when the statement is prepared.
	_, err = f.client.Prepare(ctx, "SELEC 1")
	wantStatus(t, "preparing a syntax error", err, codes.InvalidArgument, "SYNTAX_ERROR")
}

func TestPreparedStatementRefusesParameters(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	ctx := as(f.admin)
	prep, err := f.client.Prepare(ctx, "SELECT count(*) FROM ev WHERE user_id = $1")
	if err != nil {
		t.Fatal(err)
	}
	defer prep.Close(ctx)
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "1", Type: arrow.PrimitiveTypes.Int64}}, nil))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(7)
	params := b.NewRecordBatch()
	defer params.Release()
	prep.SetParameters(params)
	_, err = prep.Execute(ctx)
	wantStatus(t, "binding a parameter", err, codes.InvalidArgument, "INVALID_REQUEST")
	// Without a binding, the engine says parameters are not supported.
	plain, _ := f.client.LoadPreparedStatementFromResult(&flightsql.CreatePreparedStatementResult{PreparedStatementHandle: prep.Handle()})
	_, err = plain.Execute(ctx)
	wantStatus(t, "an unbound parameter", err, codes.InvalidArgument, "ANALYSIS_ERROR")
}

func TestGetTables(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	dir := filepath.Join(f.home, "more")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 100, Files: 1, Out: dir, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Query(context.Background(), fmt.Sprintf("CREATE TABLE more_events WITH (location = '%s', format = 'parquet')", dir), nil); err != nil {
		t.Fatal(err)
	}
	ctx := as(f.reader)
	names := func(opts *flightsql.GetTablesOpts) ([]string, *fetched) {
		t.Helper()
		info, err := f.client.GetTables(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		res := f.fetch(ctx, info)
		var out []string
		for _, b := range res.batches {
			for i := 0; i < int(b.NumRows()); i++ {
				if !b.Column(0).IsNull(i) || !b.Column(1).IsNull(i) || b.Column(3).ValueStr(i) != "TABLE" {
					t.Fatalf("row %d: catalog, schema, type: %s %s %s", i, b.Column(0).ValueStr(i), b.Column(1).ValueStr(i), b.Column(3).ValueStr(i))
				}
				out = append(out, b.Column(2).ValueStr(i))
			}
		}
		return out, res
	}
	if got, _ := names(&flightsql.GetTablesOpts{}); strings.Join(got, ",") != "ev,more_events" {
		t.Fatalf("tables %v", got)
	}
	pattern := "more%"
	got, res := names(&flightsql.GetTablesOpts{TableNameFilterPattern: &pattern, IncludeSchema: true})
	if strings.Join(got, ",") != "more_events" {
		t.Fatalf("tables like %s: %v", pattern, got)
	}
	ts, err := flight.DeserializeSchema(res.batches[0].Column(4).(*array.Binary).Value(0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts.FieldsByName("user_id"); !ok {
		t.Fatalf("included schema %v", ts)
	}
	if got, _ := names(&flightsql.GetTablesOpts{TableTypes: []string{"VIEW"}}); len(got) != 0 {
		t.Fatalf("views: %v", got)
	}
	// Catalogs, schemas: none; table types: TABLE.
	for what, call := range map[string]func(context.Context, ...grpc.CallOption) (*flight.FlightInfo, error){
		"catalogs": f.client.GetCatalogs, "table types": f.client.GetTableTypes,
	} {
		info, err := call(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n, want := f.fetch(ctx, info).rows(), map[string]int64{"catalogs": 0, "table types": 1}[what]; n != want {
			t.Fatalf("%s: %d rows", what, n)
		}
	}
	info, err := f.client.GetDBSchemas(ctx, &flightsql.GetDBSchemasOpts{})
	if err != nil || f.fetch(ctx, info).rows() != 0 {
		t.Fatalf("schemas: %v", err)
	}
}

func TestGetSqlInfo(t *testing.T) {
	f := newFixture(t, loreflight.Options{Version: "v1.2.3"})
	ctx := as(f.reader)
	info, err := f.client.GetSqlInfo(ctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerName,
		flightsql.SqlInfoFlightSqlServerVersion, flightsql.SqlInfoFlightSqlServerReadOnly, flightsql.SqlInfoTransactionsSupported})
	if err != nil {
		t.Fatal(err)
	}
	res := f.fetch(ctx, info)
	got := map[uint32]string{}
	for _, b := range res.batches {
		for i := 0; i < int(b.NumRows()); i++ {
			got[b.Column(0).(*array.Uint32).Value(i)] = b.Column(1).ValueStr(i)
		}
	}
	if len(got) != 4 || !strings.Contains(got[uint32(flightsql.SqlInfoFlightSqlServerName)], "Lore") ||
		!strings.Contains(got[uint32(flightsql.SqlInfoFlightSqlServerVersion)], "v1.2.3") ||
		!strings.Contains(got[uint32(flightsql.SqlInfoFlightSqlServerReadOnly)], "false") {
		t.Fatalf("sql info %v", got)
	}
}

func TestAuthentication(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	calls := map[string]func(ctx context.Context) error{
		"execute": func(ctx context.Context) error { _, err := f.client.Execute(ctx, "SELECT 1"); return err },
		"tables": func(ctx context.Context) error {
			_, err := f.client.GetTables(ctx, &flightsql.GetTablesOpts{})
			return err
		},
		"prepare": func(ctx context.Context) error { _, err := f.client.Prepare(ctx, "SELECT 1"); return err },
		"update":  func(ctx context.Context) error { _, err := f.client.ExecuteUpdate(ctx, "ANALYZE ev"); return err },
	}
	for name, call := range calls {
		for _, tok := range []string{"", "lore_not_a_token", f.admin + "x"} {
			wantStatus(t, fmt.Sprintf("%s with token %q", name, tok), call(as(tok)), codes.Unauthenticated, "UNAUTHENTICATED")
		}
	}
	// A scheme other than Bearer is no token.
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic "+f.admin)
	wantStatus(t, "basic scheme", calls["execute"](ctx), codes.Unauthenticated, "UNAUTHENTICATED")
}

func TestReaderCannotChangeTheCatalog(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	create := fmt.Sprintf("CREATE TABLE ev2 WITH (location = '%s', format = 'parquet')", filepath.Join(f.home, "ev"))
	_, err := f.client.ExecuteUpdate(as(f.reader), create)
	wantStatus(t, "reader's CREATE TABLE (update)", err, codes.PermissionDenied, "FORBIDDEN")
	_, err = f.client.Execute(as(f.reader), create)
	wantStatus(t, "reader's CREATE TABLE (query)", err, codes.PermissionDenied, "FORBIDDEN")
	if n, err := f.client.ExecuteUpdate(as(f.admin), create); err != nil || n != 0 {
		t.Fatalf("admin's CREATE TABLE: %d %v", n, err)
	}
	if _, res := f.query(f.reader, "SELECT count(*) FROM ev2"); res.batches[0].Column(0).(*array.Int64).Value(0) != 20_000 {
		t.Fatal("ev2 does not read ev's rows")
	}
	// A statement without a result, run as a query, streams its record all the same.
	if _, res := f.query(f.admin, "DROP TABLE ev2"); res.rows() != 0 || len(res.metadata) != 1 {
		t.Fatalf("DROP TABLE as a query: %d rows, %d metadata", res.rows(), len(res.metadata))
	}
}

func TestSyntaxError(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	_, err := f.client.Execute(as(f.reader), "SELECT count(*) FRM ev")
	st := wantStatus(t, "syntax error", err, codes.InvalidArgument, "SYNTAX_ERROR")
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.Metadata["position"] == "" || info.Metadata["query_id"] == "" {
				t.Fatalf("error info %v", info.Metadata)
			}
		}
	}
	_, err = f.client.Execute(as(f.reader), "SELECT * FROM nowhere")
	wantStatus(t, "unknown table", err, codes.NotFound, "TABLE_NOT_FOUND")
}

func TestRecordAsAppMetadata(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	if _, err := f.client.ExecuteUpdate(as(f.admin), "ANALYZE ev"); err != nil {
		t.Fatal(err)
	}
	info, res := f.query(f.reader, "SELECT count(*) FROM ev")
	if len(res.metadata) != 1 || res.lastMeta == nil {
		t.Fatalf("app_metadata on %d FlightData, last %q", len(res.metadata), res.lastMeta)
	}
	var rec lore.Record
	if err := json.Unmarshal(res.lastMeta, &rec); err != nil {
		t.Fatalf("app_metadata is not a record: %v: %s", err, res.lastMeta)
	}
	tq, _ := flightsql.GetStatementQueryTicket(info.Endpoint[0].Ticket)
	if rec.Execution.Mode != "context" || rec.Subject != "ann" || rec.ID != string(tq.GetStatementHandle()) || rec.Rows != 1 {
		t.Fatalf("record %+v", rec)
	}
	// A result without rows still carries its record, on one empty batch.
	_, empty := f.query(f.reader, "SELECT * FROM ev WHERE false")
	if empty.rows() != 0 || len(empty.metadata) != 1 {
		t.Fatalf("empty result: %d rows, %d metadata", empty.rows(), len(empty.metadata))
	}
}

func TestLargeResultStreamsInBatches(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	info, res := f.query(f.reader, "SELECT * FROM range(1000000)")
	var sum int64
	for _, b := range res.batches {
		col := b.Column(0).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			sum += col.Value(i)
		}
	}
	if res.rows() != 1_000_000 || info.TotalRecords != 1_000_000 || sum != 999_999*1_000_000/2 {
		t.Fatalf("rows %d (TotalRecords %d), sum %d", res.rows(), info.TotalRecords, sum)
	}
	t.Logf("%d batches", len(res.batches))
	if len(res.batches) < 10 || len(res.metadata) != 1 || res.lastMeta == nil {
		t.Fatalf("%d batches, metadata on %d", len(res.batches), len(res.metadata))
	}
}

// The engine's result cache shares a result's batches between statements: streaming
// one must leave them intact for the next answer from the cache.
func TestCachedResultSurvivesStreaming(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	const q = "SELECT category, sum(user_id) AS s FROM ev GROUP BY category ORDER BY category"
	values := func(res *fetched) string {
		var out []string
		for _, b := range res.batches {
			for i := 0; i < int(b.NumRows()); i++ {
				out = append(out, b.Column(0).ValueStr(i)+"="+b.Column(1).ValueStr(i))
			}
		}
		return strings.Join(out, ",")
	}
	_, first := f.query(f.reader, q)
	for i := 0; i < 3; i++ {
		_, again := f.query(f.reader, q)
		var rec lore.Record
		if err := json.Unmarshal(again.lastMeta, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Execution.Mode != "cache" || values(again) != values(first) || values(first) == "" {
			t.Fatalf("answer %d (mode %s): %s, first %s", i, rec.Execution.Mode, values(again), values(first))
		}
	}
}

// A batch larger than a gRPC client takes in one message by default (4 MiB) is sent
// in slices.
func TestWideBatchesAreSplit(t *testing.T) {
	f := newFixture(t, loreflight.Options{})
	_, res := f.query(f.reader, "SELECT repeat('x', 1000) AS s FROM range(20000)")
	if res.rows() != 20_000 || res.batches[0].Column(0).ValueStr(0) != strings.Repeat("x", 1000) {
		t.Fatalf("rows %d", res.rows())
	}
	if len(res.batches) < 4 || len(res.metadata) != 1 || res.lastMeta == nil {
		t.Fatalf("%d batches, metadata on %d FlightData", len(res.batches), len(res.metadata))
	}
}

func TestCancelAndRenewWaitingResult(t *testing.T) {
	f := newFixture(t, loreflight.Options{TicketTTL: time.Second})
	ctx := as(f.reader)
	info, err := f.client.Execute(ctx, "SELECT 1 AS x")
	if err != nil {
		t.Fatal(err)
	}
	// Renewed twice past its first expiry, the result still waits.
	for i := 0; i < 2; i++ {
		time.Sleep(700 * time.Millisecond)
		ep, err := f.client.RenewFlightEndpoint(ctx, &flight.RenewFlightEndpointRequest{Endpoint: info.Endpoint[0]})
		if err != nil || ep.ExpirationTime == nil {
			t.Fatalf("renew %d: %v", i, err)
		}
	}
	if f.srv.Waiting() != 1 {
		t.Fatal("the renewed result expired")
	}
	if r, err := f.client.CancelFlightInfo(as(f.admin), &flight.CancelFlightInfoRequest{Info: info}); err != nil || r.Status != flight.CancelStatusNotCancellable {
		t.Fatalf("another's cancel: %v %v", r, err)
	}
	r, err := f.client.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
	if err != nil || r.Status != flight.CancelStatusCancelled || f.srv.Waiting() != 0 {
		t.Fatalf("cancel: %v %v, %d waiting", r, err, f.srv.Waiting())
	}
	_, err = readAll(f.client, ctx, info.Endpoint[0].Ticket)
	wantStatus(t, "a canceled result", err, codes.NotFound, "NOT_FOUND")
}
