package lore_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/types"
)

// digestSink hashes a streamed result row by row, in order, without keeping it, so
// that a result far larger than a tiny memory budget can be compared.
type digestSink struct {
	h    hash.Hash
	rows int64
	// unordered: the digest is of the rows as a multiset (a sum of row hashes), for
	// results whose order is not defined.
	unordered bool
	sumLo     uint64
	// cancel, when set, is called once rows passes cancelAt.
	cancel   func()
	cancelAt int64
}

func newDigest() *digestSink { return &digestSink{h: sha256.New()} }

func (d *digestSink) Schema(*arrow.Schema) error { return nil }

func (d *digestSink) Batch(r arrow.Record) error {
	var sb strings.Builder
	for i := 0; i < int(r.NumRows()); i++ {
		sb.Reset()
		for c := 0; c < int(r.NumCols()); c++ {
			sb.WriteString(types.ValueAt(r.Column(c), i).String())
			sb.WriteByte('|')
		}
		sb.WriteByte('\n')
		if d.unordered {
			row := sha256.Sum256([]byte(sb.String()))
			d.sumLo += binary.LittleEndian.Uint64(row[:8])
			continue
		}
		d.h.Write([]byte(sb.String()))
	}
	d.rows += r.NumRows()
	if d.cancel != nil && d.rows > d.cancelAt {
		d.cancel()
	}
	return nil
}

func (d *digestSink) sum() string {
	if d.unordered {
		return fmt.Sprintf("%016x", d.sumLo)
	}
	return hex.EncodeToString(d.h.Sum(nil))
}

// spillEngine opens an engine over n events rows whose spill directory is returned.
func spillEngine(t testing.TB, rows int64, opts lore.Options) (*lore.Engine, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "events")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: rows, Files: 4, Out: dir, Seed: 7, RowGroupRows: 50_000}); err != nil {
		t.Fatal(err)
	}
	if opts.SpillDir == "" {
		opts.SpillDir = filepath.Join(t.TempDir(), "spill")
	}
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = 2 << 30
	}
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	e, err := lore.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Query(context.Background(), fmt.Sprintf("CREATE TABLE events WITH (location = '%s', format = 'parquet')", dir), nil); err != nil {
		t.Fatal(err)
	}
	return e, opts.SpillDir
}

// streamDigest runs stmt under settings and returns its result's digest and record.
func streamDigest(t *testing.T, e *lore.Engine, stmt string, settings map[string]string) (string, int64, *lore.Record) {
	t.Helper()
	d := newDigest()
	d.unordered = !orderedResult(stmt)
	rec, err := e.QueryStream(context.Background(), stmt, settings, d)
	if err != nil {
		var p *errs.PanicError
		if errors.As(err, &p) {
			t.Log(string(p.Stack))
		}
		t.Fatalf("%s (settings %v): %v", stmt, settings, err)
	}
	return d.sum(), d.rows, rec
}

// orderedResult reports whether stmt orders its result: it has an ORDER BY outside
// parentheses (not one of a subquery's, an aggregate's or a window's).
func orderedResult(stmt string) bool {
	depth := 0
	for i := 0; i < len(stmt); i++ {
		switch stmt[i] {
		case '(':
			depth++
		case ')':
			depth--
		default:
			if depth == 0 && strings.HasPrefix(stmt[i:], "ORDER BY") {
				return true
			}
		}
	}
	return false
}

// spillEmpty fails unless the spill directory holds nothing.
func spillEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("spill directory %s holds %d entries after the statement, want none", dir, len(entries))
	}
}

// sortShapes are ORDER BYs over many types whose keys order every distinct row, so
// that the in-memory and the spilling sort must return the same sequence.
var sortShapes = []string{
	"SELECT ts, user_id, category, amount, CAST(amount AS DECIMAL(12,2)) AS d, flag, country, status, latency_ms FROM events " +
		"ORDER BY category DESC, amount NULLS FIRST, d, ts, user_id, status, latency_ms, flag, country",
	"SELECT * FROM events ORDER BY flag NULLS FIRST, CAST(latency_ms AS DECIMAL(12,3)) DESC NULLS LAST, ts DESC, user_id, amount, category, country, status",
	"SELECT country, ts, amount FROM events ORDER BY country, ts, amount NULLS FIRST LIMIT 150000",
}

// groupShapes are grouped aggregates of many groups (the second about one a row).
// Sums and averages are of decimals: a float sum's last bits depend on the order
// rows are added in, which differs between workers even in memory.
var groupShapes = []string{
	"SELECT user_id, count(*), sum(CAST(amount AS DECIMAL(14,2))), avg(CAST(latency_ms AS DECIMAL(12,2))), avg(status), min(category), max(ts), count(DISTINCT country), min(flag) FROM events GROUP BY user_id",
	"SELECT ts, user_id, count(*), max(amount), min(country), count(DISTINCT status) FROM events GROUP BY ts, user_id",
	"SELECT category || country AS k, status, count(*), sum(CAST(latency_ms AS DECIMAL(14,2))) FROM events GROUP BY 1, 2",
}

// testMultisetSpill checks every statement of shapes under a tiny budget against the
// in-memory run, as multisets of rows, and that at least `least` of them spilled and
// left nothing behind.
func testMultisetSpill(t *testing.T, shapes []string, rows int64, limit string, least int) {
	e, spill := spillEngine(t, rows, lore.Options{})
	spilled := 0
	for _, stmt := range shapes {
		want, n, rec := streamDigest(t, e, stmt, map[string]string{"result_cache": "false"})
		if rec.Execution.SpilledBytes != 0 {
			t.Fatalf("%s spilled %d bytes in memory", stmt, rec.Execution.SpilledBytes)
		}
		got, m, rec := streamDigest(t, e, stmt, map[string]string{"memory_limit": limit, "result_cache": "false"})
		if got != want || m != n {
			t.Fatalf("%s under memory_limit %s: %d rows, digest %s; in memory %d rows, %s", stmt, limit, m, got, n, want)
		}
		if rec.Execution.SpilledBytes > 0 {
			spilled++
		}
		t.Logf("%d rows, spilled %d bytes in %d files", m, rec.Execution.SpilledBytes, rec.Execution.SpillFiles)
		spillEmpty(t, spill)
	}
	if spilled < least {
		t.Fatalf("%d of the shapes spilled, want at least %d", spilled, least)
	}
}

// testGroupSpill: the group shapes; at least the two of many groups spill.
func testGroupSpill(t *testing.T, rows int64, limit string) {
	testMultisetSpill(t, groupShapes, rows, limit, 2)
}

// TestGroupSpillShort: the group shapes over 300,000 rows with an 8 MiB budget (a batch of 8,192 new groups with distinct counts takes about 2 MiB).
func TestGroupSpillShort(t *testing.T) { testGroupSpill(t, 300_000, "8MiB") }

// TestGroupSpill: the group shapes over 2M rows (about 1M groups for the second)
// with a 16 MiB budget.
func TestGroupSpill(t *testing.T) {
	if testing.Short() {
		t.Skip("aggregates 2M rows several times")
	}
	testGroupSpill(t, 2_000_000, "16MiB")
}

// joinShapes are joins whose build side is about the whole table.
var joinShapes = []string{
	"SELECT a.user_id, a.ts, a.amount, b.category, b.flag FROM events a JOIN events b ON a.ts = b.ts AND a.user_id = b.user_id AND a.status = b.status",
	"SELECT a.user_id, a.country, b.latency_ms FROM events a LEFT JOIN (SELECT * FROM events WHERE status = 200) b ON a.ts = b.ts AND a.user_id = b.user_id AND a.category = b.category",
	"SELECT a.user_id, a.category, b.ts, b.country, b.category FROM (SELECT * FROM events WHERE status <> 200) a FULL JOIN (SELECT * FROM events WHERE flag) b ON a.ts = b.ts AND a.user_id = b.user_id",
	"SELECT * FROM events a WHERE NOT EXISTS (SELECT 1 FROM events b WHERE b.user_id = a.user_id AND b.country = a.country AND b.category = a.category AND b.status <> 500)",
	"SELECT * FROM events a WHERE EXISTS (SELECT 1 FROM events b WHERE b.user_id = a.user_id AND b.category = a.category AND b.ts > a.ts AND b.status <> 404)",
}

// testJoinSpill: the join shapes; at least three spill.
func testJoinSpill(t *testing.T, rows int64, limit string) {
	testMultisetSpill(t, joinShapes, rows, limit, 3)
}

// TestJoinSpillShort: the join shapes over 300,000 rows with a 4 MiB budget.
func TestJoinSpillShort(t *testing.T) { testJoinSpill(t, 300_000, "4MiB") }

// TestJoinSpill: the join shapes over 2M rows with a 16 MiB budget.
func TestJoinSpill(t *testing.T) {
	if testing.Short() {
		t.Skip("joins 2M rows several times")
	}
	testJoinSpill(t, 2_000_000, "16MiB")
}

// testSortSpill checks every sort shape under a tiny budget against the in-memory
// sort, row for row, and that the spilling run spilled and left nothing behind.
func testSortSpill(t *testing.T, rows int64, limit string) {
	e, spill := spillEngine(t, rows, lore.Options{})
	for _, stmt := range sortShapes {
		want, n, rec := streamDigest(t, e, stmt, map[string]string{"result_cache": "false"})
		if rec.Execution.SpilledBytes != 0 {
			t.Fatalf("%s spilled %d bytes in memory", stmt, rec.Execution.SpilledBytes)
		}
		got, m, rec := streamDigest(t, e, stmt, map[string]string{"memory_limit": limit, "result_cache": "false"})
		if got != want || m != n {
			t.Fatalf("%s under memory_limit %s: %d rows, digest %s; in memory %d rows, %s", stmt, limit, m, got, n, want)
		}
		if rec.Execution.SpilledBytes == 0 || rec.Execution.SpillFiles < 2 {
			t.Fatalf("%s under memory_limit %s did not spill: %+v", stmt, limit, rec.Execution)
		}
		t.Logf("%d rows, spilled %d bytes in %d files", m, rec.Execution.SpilledBytes, rec.Execution.SpillFiles)
		spillEmpty(t, spill)
	}
}

// TestSortSpillShort: the sort shapes over 300,000 rows with a 2 MiB budget (runs
// merged in more than one pass).
func TestSortSpillShort(t *testing.T) { testSortSpill(t, 300_000, "2MiB") }

// TestSortSpill: the sort shapes over 2M rows with a 16 MiB budget.
func TestSortSpill(t *testing.T) {
	if testing.Short() {
		t.Skip("sorts 2M rows several times")
	}
	testSortSpill(t, 2_000_000, "4MiB")
}

// TestSpillCleanup: spill files are removed when a spilling statement fails and
// when it is canceled, and stale directories of a dead process are removed when an
// engine opens.
func TestSpillCleanup(t *testing.T) {
	e, spill := spillEngine(t, 200_000, lore.Options{})
	stmt := "SELECT * FROM events ORDER BY category, ts"
	// An error after the runs are written: a division by zero in the output.
	bad := "SELECT CAST(category AS INTEGER) FROM (" + stmt + ")"
	if _, err := e.QueryStream(context.Background(), bad, map[string]string{"memory_limit": "2MiB"}, newDigest()); err == nil {
		t.Fatal("division by zero succeeded")
	}
	spillEmpty(t, spill)
	ctx, cancel := context.WithCancel(context.Background())
	d := newDigest()
	d.cancel, d.cancelAt = cancel, 10_000
	if _, err := e.QueryStream(ctx, stmt, map[string]string{"memory_limit": "2MiB"}, d); errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("canceled spilling sort: %v", err)
	}
	spillEmpty(t, spill)

	// A spilling aggregate and a spilling join canceled once their output starts,
	// with partition files still to read.
	for _, q := range []string{groupShapes[1], joinShapes[0]} {
		ctx, cancel := context.WithCancel(context.Background())
		d := newDigest()
		d.cancel, d.cancelAt = cancel, 1
		if _, err := e.QueryStream(ctx, q, map[string]string{"memory_limit": "4MiB"}, d); errs.CodeOf(err) != errs.Canceled {
			t.Fatalf("canceled %s: %v", q, err)
		}
		cancel()
		spillEmpty(t, spill)
	}

	// A directory left by a process that no longer runs (pid 2^22+1 is above the
	// kernel's limit) is removed at open; one of a live process stays.
	stale := filepath.Join(spill, fmt.Sprintf("%d-1", 1<<22+1))
	live := filepath.Join(spill, "1-1")
	for _, d := range []string{stale, live} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "sort-1.arrows"), []byte("x"), 0o600)
	}
	open(t, lore.Options{SpillDir: spill})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale spill directory kept: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("a live process's spill directory was removed: %v", err)
	}
}

// TestSpillLimit: a statement that needs more spill space than the engine's bound
// fails with RESOURCE_EXHAUSTED and leaves nothing behind.
func TestSpillLimit(t *testing.T) {
	e, spill := spillEngine(t, 200_000, lore.Options{SpillLimit: 1 << 20})
	_, err := e.QueryStream(context.Background(), "SELECT * FROM events ORDER BY category, ts", map[string]string{"memory_limit": "2MiB"}, newDigest())
	var le *errs.Error
	if !errors.As(err, &le) || le.Code != errs.ResourceExhausted || !strings.Contains(err.Error(), "spill") {
		t.Fatalf("past the spill limit: %v", err)
	}
	spillEmpty(t, spill)
}

// TestTPCHSpill runs the 22 TPC-H queries at scale factor 0.1 (LORE_TPCH_SF
// overrides) in memory and under budgets of 64 MiB and 4 MiB (LORE_TPCH_SPILL_LIMIT
// sets one instead), and compares the answers as multisets of rows. At SF 0.1 no
// query needs to spill under 64 MiB; under 4 MiB the sorts, aggregates and joins of
// six of them do. The in-memory answers are checked against DuckDB by tests/oracle.
func TestTPCHSpill(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-H at SF 0.1 and runs it twice")
	}
	sf, limits := 0.1, []string{"64MiB", "4MiB"}
	if s := os.Getenv("LORE_TPCH_SF"); s != "" {
		fmt.Sscan(s, &sf)
	}
	if s := os.Getenv("LORE_TPCH_SPILL_LIMIT"); s != "" {
		limits = []string{s}
	}
	dir := t.TempDir()
	if err := gen.TPCH(context.Background(), gen.TPCHOptions{SF: sf, Out: dir, Files: 2}); err != nil {
		t.Fatal(err)
	}
	spill := filepath.Join(t.TempDir(), "spill")
	e := open(t, lore.Options{MemoryLimit: 4 << 30, SpillDir: spill})
	for _, tbl := range gen.TPCHTables {
		query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = '%s', format = 'parquet')", tbl, filepath.Join(dir, tbl)))
	}
	files, err := filepath.Glob(filepath.Join("bench", "queries", "tpch", "q*.sql"))
	if err != nil || len(files) != 22 {
		t.Fatalf("want the 22 queries in bench/queries/tpch/: %d, %v", len(files), err)
	}
	for _, limit := range limits {
		tpchUnder(t, e, files, limit, spill)
	}
}

// tpchUnder compares each TPC-H query under memory_limit limit with its in-memory
// answer.
func tpchUnder(t *testing.T, e *lore.Engine, files []string, limit, spill string) {
	spilled := 0
	for _, path := range files {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		stmt := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(text)), ";"))
		run := func(settings map[string]string) (string, int64, *lore.Record) {
			d := newDigest()
			d.unordered = true
			rec, err := e.QueryStream(context.Background(), stmt, settings, d)
			if err != nil {
				t.Fatalf("%s (settings %v): %v", filepath.Base(path), settings, err)
			}
			return d.sum(), d.rows, rec
		}
		want, n, _ := run(map[string]string{"result_cache": "false"})
		got, m, rec := run(map[string]string{"result_cache": "false", "memory_limit": limit})
		if got != want || m != n {
			t.Errorf("%s under memory_limit %s: %d rows, digest %s; in memory %d rows, %s", filepath.Base(path), limit, m, got, n, want)
		}
		if rec.Execution.SpilledBytes > 0 {
			spilled++
		}
		t.Logf("%s: %d rows, spilled %d bytes in %d files", filepath.Base(path), m, rec.Execution.SpilledBytes, rec.Execution.SpillFiles)
		spillEmpty(t, spill)
	}
	t.Logf("%d of 22 queries spilled under %s", spilled, limit)
}
