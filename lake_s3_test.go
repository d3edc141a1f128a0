package lore_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/source/deletes"
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

// TestLakePathsOnS3 covers the paths a lake table's metadata names when the table
// lives in a bucket: Iceberg metadata naming absolute s3:// and s3a:// URIs, and
// local absolute paths of a table copied into a bucket; a Delta deletion vector
// stored by absolute s3:// URI ('p'); Hive partition values URL-escaped in S3 keys.
func TestLakePathsOnS3(t *testing.T) {
	srv, e := s3Engine(t, lore.Options{NoAutoRefresh: true}, "lake")
	src := t.TempDir()
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 6_000, Files: 2, Out: src, Seed: 5, RowGroupRows: 1_000}); err != nil {
		t.Fatal(err)
	}
	files := []deltaFile{{path: gen.EventsFileName(0)}, {path: gen.EventsFileName(1)}}
	copyData := func(root string) {
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(src, f.path))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, f.path), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := cell(query(t, e, "SELECT sum(user_id) FROM "+types.QuoteString(src)), 0, 0)

	// Iceberg: the metadata names where the table was written; read from the bucket.
	for _, c := range []struct{ declared, at string }{
		{"s3://lake/ice_abs", "s3://lake/ice_abs"},    // absolute URIs of where it is
		{"s3a://lake/ice_s3a", "s3://lake/ice_s3a"},   // another scheme of the same store
		{"s3://lake/ice_s3a2", "s3a://lake/ice_s3a2"}, // read by the other scheme
		{"/warehouse/db/t", "s3://lake/ice_copied"},   // local paths of a table copied in
	} {
		root := t.TempDir()
		copyData(filepath.Join(root, "data"))
		icebergCommitAt(t, root, c.declared, gen.EventsSchema.Fields(), false, files)
		srv.Upload(t, root, strings.Replace(c.at, "s3a://", "s3://", 1))
		got := cell(query(t, e, "SELECT sum(user_id) FROM iceberg_scan("+types.QuoteString(c.at)+")"), 0, 0)
		if got != want {
			t.Errorf("Iceberg declared at %s, read at %s: sum %s, want %s", c.declared, c.at, got, want)
		}
	}

	// Delta: a deletion vector in a file named by its absolute s3:// URI.
	root := t.TempDir()
	copyData(root)
	var schema [][2]string
	for _, f := range gen.EventsSchema.Fields() {
		schema = append(schema, [2]string{f.Name, deltaType(t, f.Type)})
	}
	deltaCommit(t, root, 0, schema, nil, nil, files)
	p, err := deletes.FromSorted([]int64{0, 7, 2_999})
	if err != nil {
		t.Fatal(err)
	}
	bitmap := p.AppendRoaring64(binary.LittleEndian.AppendUint32(nil, 1681511377))
	dvFile := binary.BigEndian.AppendUint32([]byte{1}, uint32(len(bitmap)))
	dvFile = binary.BigEndian.AppendUint32(append(dvFile, bitmap...), crc32.ChecksumIEEE(bitmap))
	if err := os.WriteFile(filepath.Join(root, "dv.bin"), dvFile, 0o644); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	dv, err := json.Marshal(deletes.DV{StorageType: "p", PathOrInlineDv: "s3://lake/dvt/dv.bin", Offset: &one, SizeInBytes: int32(len(bitmap)), Cardinality: 3})
	if err != nil {
		t.Fatal(err)
	}
	renewed := files[1]
	renewed.dv = string(dv)
	deltaCommit(t, root, 1, nil, nil, files[1:], []deltaFile{renewed})
	srv.Upload(t, root, "s3://lake/dvt")
	countIn(t, e, "SELECT count(*) FROM delta_scan('s3://lake/dvt')", 5_997, "scan")
	query(t, e, "CREATE TABLE dvt WITH (location = 's3://lake/dvt', format = 'delta')")
	countIn(t, e, "SELECT count(*) FROM dvt VERSION AS OF 0", 6_000, "scan")

	// Hive: values with characters a key must escape, on disk and in S3 alike.
	hive := t.TempDir()
	for k, v := range []string{"a%2Fb", "x%3Dy", "sp%20ace", "plain", "%25"} {
		b, err := os.ReadFile(filepath.Join(src, files[k%2].path))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(hive, "tag="+v)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f.parquet"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv.Upload(t, hive, "s3://lake/hive")
	local, remote := types.QuoteString(hive), types.QuoteString("s3://lake/hive")
	res := sameOnS3(t, e, "SELECT tag, count(*) FROM {} GROUP BY tag", local, remote, nil)
	if got := resultText(res); !strings.Contains(got, "a/b|") || !strings.Contains(got, "x=y|") || !strings.Contains(got, "sp ace|") || !strings.Contains(got, "%|") {
		t.Errorf("Hive values not unescaped: %s", got)
	}
	sameOnS3(t, e, "SELECT count(*), sum(user_id) FROM {} WHERE tag = 'a/b'", local, remote, nil)
	registerOnS3(t, e, "h", "parquet", hive, "s3://lake/hive")
	sameOnS3(t, e, "SELECT tag, count(*), min(ts) FROM {} WHERE tag >= 'p' GROUP BY tag", "hl", "hs", nil)
}

// TestStalenessOnS3: a record of a table in S3 answers while every object is the one
// it describes; an object overwritten (a new ETag, even of the same size) makes it
// stale, and the next statement reads the new bytes and never answers from it; the
// refresh brings it current again. The same holds for a Delta commit landed in S3.
func TestStalenessOnS3(t *testing.T) {
	srv, e := s3Engine(t, lore.Options{}, "lake")
	a, b := events(t, 4_000, 2, 1_000, false), events(t, 4_000, 2, 500, true)
	srv.Upload(t, a, "s3://lake/st")
	query(t, e, "CREATE TABLE st WITH (location = 's3://lake/st/')")
	query(t, e, "ANALYZE st")
	countIn(t, e, "SELECT count(*) FROM st", 4_000, "context")
	wantMax := cell(query(t, e, "SELECT max(user_id) FROM "+types.QuoteString(b)), 0, 0)
	// The same rows written in other row groups: same count, other bytes, new ETags.
	srv.Upload(t, b, "s3://lake/st")
	res := query(t, e, "SELECT count(*), max(user_id) FROM st")
	if res.Record.Execution.Mode != "scan" || cell(res, 0, 0) != "4000" || cell(res, 0, 1) != wantMax {
		t.Fatalf("after an overwrite: %s in mode %s, want 4000|%s read", resultText(res), res.Record.Execution.Mode, wantMax)
	}
	lore.WaitForRefreshes(e)
	countIn(t, e, "SELECT count(*) FROM st", 4_000, "context")
	detail := query(t, e, "DESCRIBE DETAIL st")
	if !strings.Contains(resultText(detail), "listing of 2 files") {
		t.Errorf("DESCRIBE DETAIL: %s", resultText(detail))
	}
	// A file added: the listing's version moves too.
	srv.Put(t, "s3://lake/st/extra/"+gen.EventsFileName(0), mustRead(t, filepath.Join(a, gen.EventsFileName(0))))
	countIn(t, e, "SELECT count(*) FROM st", 6_000, "scan")
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
