package lore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/storage/s3/s3test"
	"github.com/loredb/lore/types"
)

// The tests of this file hold every location form to one rule: a table in an S3
// bucket gives the answers it gives on local disk. Each uploads its tables through
// the real protocol to an in-process S3 server and runs the same statements over the
// local copy and the bucket in one engine, comparing whole results (the rows as a
// multiset, the columns, the mode), or, where the local read fails, the error code.

// s3Engine starts an S3 server with the buckets made and an engine that reads both
// it (s3://, s3a://) and local disk.
func s3Engine(t *testing.T, opts lore.Options, buckets ...string) (*s3test.Server, *lore.Engine) {
	t.Helper()
	srv := s3test.Start(t, buckets...)
	cfg := srv.Config()
	opts.S3 = &cfg
	return srv, open(t, opts)
}

// outcome renders what a statement gave: its error code, or its columns, its rows
// sorted (a multiset: the order of rows without ORDER BY is the engine's) and the
// mode it ran in.
func outcome(e *lore.Engine, sql string, settings map[string]string) (string, *lore.Result) {
	res, err := e.Query(context.Background(), sql, settings)
	if err != nil {
		return "error " + string(errs.CodeOf(err)), nil
	}
	var head []string
	for _, f := range res.Schema.Fields() {
		head = append(head, f.Name+" "+types.Name(f.Type))
	}
	rows := strings.Split(strings.TrimSuffix(resultText(res), "\n"), "\n")
	slices.Sort(rows)
	return fmt.Sprintf("mode %s\n%s\n%s", res.Record.Execution.Mode, strings.Join(head, ", "), strings.Join(rows, "\n")), res
}

// sameOnS3 runs tmpl with its {} naming the local table and then the one in S3, and
// requires the same outcome. It returns the local result (nil when the statement
// failed).
func sameOnS3(t *testing.T, e *lore.Engine, tmpl, local, remote string, settings map[string]string) *lore.Result {
	t.Helper()
	want, res := outcome(e, strings.ReplaceAll(tmpl, "{}", local), settings)
	got, _ := outcome(e, strings.ReplaceAll(tmpl, "{}", remote), settings)
	if got != want && !closeResults(got, want, 1e-9) {
		t.Errorf("%s\non local disk:\n%s\nin S3:\n%s", strings.ReplaceAll(tmpl, "{}", remote), clip(want), clip(got))
	}
	return res
}

// clip shortens a long rendering for an error message.
func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// columnsOnS3 compares, for every column of res a bound can be taken of, its
// least, greatest and non-NULL count, and the rows a filter at its least value
// keeps (which prunes by the files' and the record's bounds).
func columnsOnS3(t *testing.T, e *lore.Engine, res *lore.Result, local, remote string, settings map[string]string) {
	t.Helper()
	if res == nil {
		return
	}
	for _, f := range res.Schema.Fields() {
		if types.IsNested(f.Type) || (types.IsBinary(f.Type) && !types.IsString(f.Type)) {
			continue
		}
		c := types.QuoteIdent(f.Name)
		got := sameOnS3(t, e, fmt.Sprintf("SELECT min(%s)::VARCHAR, max(%s)::VARCHAR, count(%s) FROM {}", c, c, c), local, remote, settings)
		if got == nil || got.NumRows() == 0 {
			continue
		}
		if v := text(got, 0, 0); v != "None" {
			lit := fmt.Sprintf("CAST(%s AS %s)", types.QuoteString(v), types.Name(f.Type))
			sameOnS3(t, e, fmt.Sprintf("SELECT count(*), max(%s)::VARCHAR FROM {} WHERE %s > %s", c, c, lit), local, remote, settings)
		}
	}
}

// sample is every fixture in the full run, and every stride-th (from the first) in a
// short one: each kind is still covered there, in a fraction of the time.
func sample[T any](xs []T, stride int) []T {
	if !testing.Short() {
		return xs
	}
	var out []T
	for i := 0; i < len(xs); i += stride {
		out = append(out, xs[i])
	}
	return out
}

// TestParquetFixturesOnS3 reads every Parquet fixture (and a glob and a directory of
// them) from S3 and from disk: the same rows, bounds and pruned counts; a file that
// must fail fails with the same code.
func TestParquetFixturesOnS3(t *testing.T) {
	dir := filepath.Join(shareddata.Dir(t), "parquet-testing")
	b, err := os.ReadFile(filepath.Join(dir, "facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var facts []struct {
		File string `json:"file"`
	}
	if err := json.Unmarshal(b, &facts); err != nil {
		t.Fatal(err)
	}
	srv, e := s3Engine(t, lore.Options{NoAutoRefresh: true}, "lake")
	srv.Upload(t, dir, "s3://lake/pq")
	for _, f := range sample(facts, 6) {
		t.Run(f.File, func(t *testing.T) {
			local := "read_parquet(" + types.QuoteString(filepath.Join(dir, f.File)) + ")"
			remote := "read_parquet(" + types.QuoteString("s3://lake/pq/"+f.File) + ")"
			res := sameOnS3(t, e, "SELECT * FROM {}", local, remote, nil)
			sameOnS3(t, e, "SELECT count(*) FROM {}", local, remote, nil)
			columnsOnS3(t, e, res, local, remote, nil)
		})
	}
	for _, loc := range []string{"apache/alltypes_plain*.parquet", "apache/alltypes_*", "duckdb/broken/"} {
		sameOnS3(t, e, "SELECT * FROM {}", types.QuoteString(filepath.Join(dir, loc)), types.QuoteString("s3://lake/pq/"+loc), nil)
	}
}

// TestDeltaFixturesOnS3 reads every Delta fixture from S3 and from disk, by path and
// registered: the same rows at the latest version and at every version the facts
// count, the same bounds; ANALYZE then answers the same counts from the record.
func TestDeltaFixturesOnS3(t *testing.T) {
	dir, facts := deltaFacts(t)
	srv, e := s3Engine(t, lore.Options{NoAutoRefresh: true}, "lake")
	srv.Upload(t, dir, "s3://lake/delta")
	for i, f := range sample(facts, 5) {
		t.Run(f.Table, func(t *testing.T) {
			localDir, remoteDir := filepath.Join(dir, f.Table), "s3://lake/delta/"+f.Table
			local := "delta_scan(" + types.QuoteString(localDir) + ")"
			remote := "delta_scan(" + types.QuoteString(remoteDir) + ")"
			if strings.HasPrefix(f.Note, "LOG-ONLY") {
				// Its data files were never there: only the log is read.
				sameOnS3(t, e, "SELECT * FROM {} LIMIT 0", local, remote, nil)
				return
			}
			res := sameOnS3(t, e, "SELECT * FROM {}", local, remote, nil)
			columnsOnS3(t, e, res, local, remote, scanned)
			if !registerOnS3(t, e, fmt.Sprintf("d%d", i), "delta", localDir, remoteDir) {
				return
			}
			for _, pv := range f.RowsPerVersion {
				if len(pv) > 0 {
					sameOnS3(t, e, fmt.Sprintf("SELECT * FROM {} VERSION AS OF %v", pv[0]),
						fmt.Sprintf("d%dl", i), fmt.Sprintf("d%ds", i), nil)
				}
			}
			columnsOnS3(t, e, res, fmt.Sprintf("d%dl", i), fmt.Sprintf("d%ds", i), nil)
		})
	}
}

// registerOnS3 registers the local table as namel and the one in S3 as names (when
// the local one can be), and analyzes both. It reports whether they were registered.
func registerOnS3(t *testing.T, e *lore.Engine, name, format, local, remote string) bool {
	t.Helper()
	ctx := context.Background()
	create := "CREATE TABLE %s WITH (location = %s, format = '%s')"
	_, errL := e.Query(ctx, fmt.Sprintf(create, name+"l", types.QuoteString(local), format), nil)
	_, errS := e.Query(ctx, fmt.Sprintf(create, name+"s", types.QuoteString(remote), format), nil)
	if errs.CodeOf(errL) != errs.CodeOf(errS) {
		t.Fatalf("CREATE TABLE: on local disk %v, in S3 %v", errL, errS)
	}
	if errL != nil {
		return false
	}
	// ANALYZE reports the table, the version's digest (of paths and change markers,
	// which differ) and its time besides what it found: compare what it found.
	var found [2]string
	for k, n := range []string{name + "l", name + "s"} {
		res, err := e.Query(ctx, "ANALYZE "+n, nil)
		if err != nil {
			found[k] = "error " + string(errs.CodeOf(err))
			continue
		}
		found[k] = fmt.Sprintf("rows %s, distinct columns %s, full read %s", cell(res, 0, 1), cell(res, 0, 2), cell(res, 0, 3))
	}
	if found[0] != found[1] {
		t.Errorf("ANALYZE: on local disk %s, in S3 %s", found[0], found[1])
	}
	sameOnS3(t, e, "SELECT count(*) FROM {}", name+"l", name+"s", nil)
	return true
}

// TestIcebergFixturesOnS3 reads every Iceberg fixture copied into a bucket (its
// metadata names the paths it was written at, which the reader maps under where it
// was found) from S3 and from disk: by metadata file, by directory, registered, and
// at every snapshot the facts count.
func TestIcebergFixturesOnS3(t *testing.T) {
	dir, facts := icebergFacts(t)
	srv, e := s3Engine(t, lore.Options{NoAutoRefresh: true}, "lake")
	srv.Upload(t, dir, "s3://lake/ice")
	for i, f := range sample(facts, 5) {
		t.Run(f.Table, func(t *testing.T) {
			localMeta, remoteMeta := filepath.Join(dir, f.Table, f.MetadataFile), "s3://lake/ice/"+f.Table+"/"+f.MetadataFile
			local := "iceberg_scan(" + types.QuoteString(localMeta) + ")"
			remote := "iceberg_scan(" + types.QuoteString(remoteMeta) + ")"
			res := sameOnS3(t, e, "SELECT * FROM {}", local, remote, nil)
			if !caseBlind[f.Table] {
				columnsOnS3(t, e, res, local, remote, scanned)
			}
			sameOnS3(t, e, "SELECT count(*) FROM {}", "iceberg_scan("+types.QuoteString(filepath.Join(dir, f.Table))+")",
				"iceberg_scan("+types.QuoteString("s3://lake/ice/"+f.Table)+")", nil)
			for _, s := range f.Snapshots {
				if _, err := s.ID.Int64(); err == nil {
					sameOnS3(t, e, "SELECT * FROM {}", strings.TrimSuffix(local, ")")+", snapshot_from_id => "+s.ID.String()+")",
						strings.TrimSuffix(remote, ")")+", snapshot_from_id => "+s.ID.String()+")", nil)
				}
			}
			registerOnS3(t, e, fmt.Sprintf("i%d", i), "iceberg", localMeta, remoteMeta)
			if res != nil && !caseBlind[f.Table] {
				columnsOnS3(t, e, res, fmt.Sprintf("i%dl", i), fmt.Sprintf("i%ds", i), nil)
			}
		})
	}
}

// TestZoneAnswersOnS3 writes the zone layouts (plain Parquet, Hive by day, Delta with
// and without deletion vectors, Iceberg) and uploads each: after ANALYZE, random
// filtered aggregates are answered the same from the table in S3 as from the one on
// disk, in the same mode, and as a scan answers them.
func TestZoneAnswersOnS3(t *testing.T) {
	srv, e := s3Engine(t, lore.Options{NoAutoRefresh: true}, "lake")
	layouts := zoneLayouts
	if testing.Short() {
		layouts = nil
		for _, l := range zoneLayouts {
			if l.name == "hive by day" || l.name == "delta with deletion vectors" || l.name == "iceberg" {
				layouts = append(layouts, l)
			}
		}
	}
	for li, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			loc := l.write(t, t.TempDir())
			remote := fmt.Sprintf("s3://lake/layout%d", li)
			srv.Upload(t, loc, remote)
			format := "parquet"
			switch {
			case l.delta:
				format = "delta"
			case l.iceberg:
				format = "iceberg"
			}
			name := fmt.Sprintf("z%d", li)
			registerOnS3(t, e, name, format, loc, remote)
			r := rand.New(rand.NewPCG(uint64(li), 25))
			for n := 0; n < 20; n++ {
				sel := layoutAggregates[r.IntN(len(layoutAggregates))] + ", " + layoutAggregates[r.IntN(len(layoutAggregates))]
				sql := fmt.Sprintf("SELECT %s FROM {} WHERE %s", sel, layoutPredicate(r, l))
				if l.hiveByDay && n%2 == 1 {
					sql = fmt.Sprintf("SELECT day, %s FROM {} WHERE %s GROUP BY day", sel, layoutPredicate(r, l))
				}
				answered := sameOnS3(t, e, sql, name+"l", name+"s", nil)
				want, _ := outcome(e, strings.ReplaceAll(sql, "{}", name+"s"), scanned)
				if answered != nil {
					got, _ := outcome(e, strings.ReplaceAll(sql, "{}", name+"s"), nil)
					_, w, _ := strings.Cut(want, "\n")
					_, g, _ := strings.Cut(got, "\n")
					if w != g && !closeResults(w, g, 1e-9) {
						t.Errorf("%s in S3: answered\n%s\nscanned\n%s", sql, clip(g), clip(w))
					}
				}
			}
		})
	}
}

// TestTableStorageOptions registers tables of two S3 servers (two endpoints, a bucket
// of the same name in each holding different files) in one engine, each with its own
// s3_endpoint, next to one of the engine's own store: each reads its own server,
// statistics answer from each, and a join reads both at once. Options that would
// carry a secret, or that name no store, are refused by name.
func TestTableStorageOptions(t *testing.T) {
	one, e := s3Engine(t, lore.Options{NoAutoRefresh: true}, "lake")
	two := s3test.Start(t, "lake")
	for k, srv := range []*s3test.Server{one, two} {
		dir := events(t, int64(3_000*(k+1)), k+1, 1_000, false)
		srv.Upload(t, dir, "s3://lake/ev")
	}
	endpoint := func(srv *s3test.Server) string {
		return fmt.Sprintf("s3_endpoint = %s, s3_allow_http = true, s3_region = 'us-east-1', s3_path_style = true", types.QuoteString(srv.URL))
	}
	query(t, e, "CREATE TABLE a WITH (location = 's3://lake/ev', "+endpoint(one)+")")
	query(t, e, "CREATE TABLE b WITH (location = 's3://lake/ev', "+endpoint(two)+")")
	query(t, e, "CREATE TABLE c WITH (location = 's3://lake/ev')") // the engine's own: server one
	for _, c := range []struct {
		table string
		rows  int
	}{{"a", 3_000}, {"b", 6_000}, {"c", 3_000}} {
		countIn(t, e, "SELECT count(*) FROM "+c.table+" WHERE user_id >= 0", c.rows, "scan")
		query(t, e, "ANALYZE "+c.table)
		countIn(t, e, "SELECT count(*) FROM "+c.table, c.rows, "context")
	}
	two.Reset()
	res := query(t, e, "SELECT (SELECT count(*) FROM a WHERE user_id >= 0), (SELECT count(*) FROM b WHERE user_id >= 0)")
	if got := resultText(res); got != "3000|6000|\n" {
		t.Errorf("one statement over a and b: %q, want 3000 and 6000", got)
	}
	if two.Counts().Get == 0 {
		t.Errorf("table b read nothing from its own server")
	}
	show := cell(query(t, e, "SHOW CREATE TABLE b"), 0, 0)
	if !strings.Contains(show, "s3_endpoint = '"+two.URL+"'") || !strings.Contains(show, "s3_allow_http = true") {
		t.Errorf("SHOW CREATE TABLE b = %s", show)
	}
	ctx := context.Background()
	for _, bad := range []struct{ sql, want string }{
		{"CREATE TABLE x WITH (location = 's3://lake/ev', s3_access_key_id = 'AKIAEXAMPLE')", "standard chain"},
		{"CREATE TABLE x WITH (location = 's3://lake/ev', s3_secret_access_key = 'hush')", "never stores credentials"},
		{"CREATE TABLE x WITH (location = 's3://lake/ev', s3_endpointt = 'x')", "s3_endpoint, s3_path_style, s3_region"},
		{"CREATE TABLE x WITH (location = 's3://lake/ev', s3_allow_http = 'yes')", "true or false"},
		{"CREATE TABLE x WITH (location = '/tmp/ev', s3_region = 'eu-west-1')", "apply to a location in S3"},
		{"CREATE TABLE x WITH (location = 's3://lake/ev', s3_allow_http = false, s3_endpoint = " + types.QuoteString(two.URL) + ")", "plain HTTP"},
	} {
		_, err := e.Query(ctx, bad.sql, nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "hush") || strings.Contains(err.Error(), "AKIAEXAMPLE") {
			t.Errorf("%s: %v, want an error saying %q and no secret", bad.sql, err, bad.want)
		}
	}
}
