//go:build cgo

package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/cli"
	lorebeam "github.com/loredb/lore/dist/beam"
	"github.com/loredb/lore/dist/beam/beamtest"
	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/storage/s3/s3test"
	"github.com/loredb/lore/types"
)

// The test binary is the engine's lore-beam command when started with beamChild
// set; rewriteEnv names a file the command rewrites before it runs, as a writer
// would between the engine's planning and the workers' reads.
const (
	beamChild  = "LORE_ENGINETEST_BEAM"
	rewriteEnv = "LORE_ENGINETEST_REWRITE"
)

func TestMain(m *testing.M) {
	if os.Getenv(beamChild) == "1" {
		if path := os.Getenv(rewriteEnv); path != "" {
			if err := rewrite(path); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
		os.Exit(lorebeam.Main(os.Args[1:], os.Stderr))
	}
	os.Setenv(beamChild, "1")
	os.Exit(m.Run())
}

// rewrite writes path again with the same bytes: a new file of the same content.
func rewrite(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	time.Sleep(10 * time.Millisecond) // a modification time of its own
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

type table struct{ name, format, location string }

func tables(t *testing.T) []table {
	data := shareddata.Dir(t)
	return []table{
		{"hive", "parquet", disttest.WriteHive(t)},
		{"dv", "delta", filepath.Join(data, "delta", "golden", "dv-with-columnmapping")},
		{"eq", "iceberg", filepath.Join(data, "iceberg", "duckdb-iceberg", "data", "persistent", "equality_deletes", "warehouse", "mydb", "mytable", "metadata", "v7.metadata.json")},
	}
}

func open(t *testing.T, beam lore.BeamOptions) *lore.Engine {
	t.Helper()
	if beam.Command == "" {
		beam.Command = os.Args[0]
	}
	e, err := lore.Open(context.Background(), lore.Options{Home: t.TempDir(), NoAutoRefresh: true, Threads: 2, Beam: beam})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func query(t *testing.T, e *lore.Engine, text string, settings map[string]string) *lore.Result {
	t.Helper()
	res, err := e.Query(context.Background(), text, settings)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return res
}

func record(t *testing.T, e *lore.Engine, name string) *stats.Record {
	t.Helper()
	st, err := e.Statistics(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := stats.Unmarshal(st.Statistics)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.LoadDetail(); err != nil {
		t.Fatal(err)
	}
	return rec
}

var beam = map[string]string{"execution": "beam"}

// analyzeBoth learns each table locally, then on Beam through e, and checks that
// the records agree and that the result and the query record say where the read ran.
func analyzeBoth(t *testing.T, e *lore.Engine, runner string) {
	for _, tb := range tables(t) {
		t.Run(tb.name, func(t *testing.T) {
			query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = %s, format = '%s')", tb.name, types.QuoteString(tb.location), tb.format), nil)
			query(t, e, "ANALYZE "+tb.name+" WITH (sketches = true)", nil)
			want := record(t, e, tb.name)
			res := query(t, e, "ANALYZE "+tb.name+" WITH (sketches = true)", beam)
			got := record(t, e, tb.name)
			disttest.SameRecord(t, got, want)
			if got.Depth != stats.DepthFull || len(got.Zones) == 0 {
				t.Errorf("depth %s, %d zones", got.Depth, len(got.Zones))
			}
			if v := res.Batches[0].Column(3).ValueStr(0); v != "beam:"+runner {
				t.Errorf("full_read %q, want beam:%s", v, runner)
			}
			d := res.Record.Execution.Distributed
			if d == nil || d.Runner != runner || d.ZonesShipped != len(got.Zones) || d.PipelineMS <= 0 {
				t.Errorf("distributed part of the record: %+v, want %d zones on %s", d, len(got.Zones), runner)
			}
		})
	}
}

// TestAnalyzeOnPrism: ANALYZE … WITH (sketches = true) under execution = 'beam'
// builds, through lore-beam on prism, the record the local full read builds, on a
// Hive table of several files, a Delta table and an Iceberg table.
func TestAnalyzeOnPrism(t *testing.T) {
	analyzeBoth(t, open(t, lore.BeamOptions{}), "prism")
}

// TestAnalyzeOnJobServer: the same through a prism job server over the Job API,
// the workers in the lore-beam process (loopback).
func TestAnalyzeOnJobServer(t *testing.T) {
	e := open(t, lore.BeamOptions{Runner: "universal", Endpoint: beamtest.JobServer(t),
		Flags: []string{"--environment_type=LOOPBACK"}})
	analyzeBoth(t, e, "universal")
}

// TestAnalyzeOnS3: a table in an S3 bucket is read by the workers through the
// bucket's address the engine's configuration gives (the descriptors carry it) and
// credentials from the workers' environment; the record equals the local full
// read's.
func TestAnalyzeOnS3(t *testing.T) {
	srv := s3test.Start(t, "lake")
	t.Setenv("AWS_ACCESS_KEY_ID", "lore-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "lore-test-secret")
	srv.Upload(t, disttest.WriteHive(t), "s3://lake/hive")
	srv.Upload(t, tables(t)[1].location, "s3://lake/dv")
	cfg := srv.Config()
	e, err := lore.Open(context.Background(), lore.Options{Home: t.TempDir(), NoAutoRefresh: true, Threads: 2,
		S3: &cfg, Beam: lore.BeamOptions{Command: os.Args[0]}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, tb := range []table{{"hive", "parquet", "s3://lake/hive"}, {"dv", "delta", "s3://lake/dv"}} {
		t.Run(tb.name, func(t *testing.T) {
			query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = %s, format = '%s')", tb.name, types.QuoteString(tb.location), tb.format), nil)
			query(t, e, "ANALYZE "+tb.name+" WITH (sketches = true)", nil)
			want := record(t, e, tb.name)
			gets := srv.Counts().Get
			res := query(t, e, "ANALYZE "+tb.name+" WITH (sketches = true)", beam)
			disttest.SameRecord(t, record(t, e, tb.name), want)
			if res.Record.Execution.Distributed == nil || srv.Counts().Get == gets {
				t.Error("the run on Beam read nothing from the bucket")
			}
		})
	}
}

// TestChangedFileKeepsTheRecord: a file rewritten after the engine planned the run
// fails it with SOURCE_CHANGED, and the record learnt before stays.
func TestChangedFileKeepsTheRecord(t *testing.T) {
	ctx := context.Background()
	dir := disttest.WriteHive(t)
	e := open(t, lore.BeamOptions{})
	query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(dir)), nil)
	query(t, e, "ANALYZE h", nil)
	before, err := e.Statistics(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".parquet") {
			victim = path
		}
		return nil
	})
	t.Setenv(rewriteEnv, victim)
	_, err = e.Query(ctx, "ANALYZE h WITH (sketches = true)", beam)
	if code := errs.CodeOf(err); code != errs.SourceChanged {
		t.Fatalf("ANALYZE on Beam of a table changed meanwhile: %v (%s), want SOURCE_CHANGED", err, code)
	}
	after, err := e.Statistics(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Statistics, after.Statistics) {
		t.Error("the record changed after a failed ANALYZE")
	}
}

// TestBadBeamSettings: what cannot run on Beam is refused before any work, with a
// stable code.
func TestBadBeamSettings(t *testing.T) {
	ctx := context.Background()
	dir := disttest.WriteHive(t)
	for _, c := range []struct {
		beam lore.BeamOptions
		code errs.Code
	}{
		{lore.BeamOptions{Command: filepath.Join(t.TempDir(), "no-such-lore-beam")}, errs.InvalidSetting},
		{lore.BeamOptions{Runner: "universal"}, errs.InvalidSetting}, // no endpoint
		{lore.BeamOptions{Runner: "--worker"}, errs.InvalidSetting},
		{lore.BeamOptions{Runner: "no-such-runner"}, errs.Internal},
	} {
		e := open(t, c.beam)
		query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(dir)), nil)
		_, err := e.Query(ctx, "ANALYZE h WITH (sketches = true)", beam)
		if code := errs.CodeOf(err); code != c.code {
			t.Errorf("%+v: %v (%s), want %s", c.beam, err, code, c.code)
		}
		if _, err := e.Statistics(ctx, "h"); errs.CodeOf(err) != errs.StatisticsUnavailable {
			t.Errorf("%+v: a record after a failed ANALYZE: %v", c.beam, err)
		}
	}
}

// TestCommandLine: lore analyze --sketches --runner prism runs the full read on
// Beam and prints where it ran.
func TestCommandLine(t *testing.T) {
	home := t.TempDir()
	dir := disttest.WriteHive(t)
	t.Setenv("LORE_BEAM_COMMAND", os.Args[0])
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Main(args, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, out, errOut := run("sql", "--home", home, "-c", fmt.Sprintf("CREATE TABLE h WITH (location = %s, format = 'parquet')", types.QuoteString(dir))); code != 0 {
		t.Fatalf("create: %d %s%s", code, out, errOut)
	}
	code, out, errOut := run("analyze", "h", "--home", home, "--sketches", "--runner", "prism", "--format", "csv")
	if code != 0 || !strings.Contains(out, "beam:prism") {
		t.Fatalf("analyze --runner prism: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run("analyze", "h", "--home", home, "--runner", "prism"); code == 0 || !strings.Contains(errOut, "--sketches") {
		t.Errorf("--runner without --sketches: exit %d, %s", code, errOut)
	}
	if code, out, errOut := run("sql", "--home", home, "-c", "ALTER TABLE h SET CLUSTERED BY (x)"); code != 0 {
		t.Fatalf("alter: %d %s%s", code, out, errOut)
	}
	code, out, errOut = run("optimize", "h", "--home", home, "--runner", "prism", "--format", "csv")
	if code != 0 || !strings.Contains(out, ",4,") {
		t.Fatalf("optimize --runner prism: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run("optimize", "h", "--home", home, "--endpoint", "localhost:1"); code == 0 || !strings.Contains(errOut, "--runner") {
		t.Errorf("--endpoint without --runner: exit %d, %s", code, errOut)
	}
}
