package lorebeam_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/loredb/lore/dist"
	lorebeam "github.com/loredb/lore/dist/beam"
	"github.com/loredb/lore/dist/beam/beamtest"
	"github.com/loredb/lore/dist/disttest"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/delta"
	"github.com/loredb/lore/source/iceberg"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
	"github.com/loredb/lore/storage"
)

func TestMain(m *testing.M) {
	beam.Init()
	os.Exit(m.Run())
}

type table struct {
	name, format, location string
	open                   func(ctx context.Context) (*source.Listing, error)
}

func tables(t *testing.T) []table {
	hive := disttest.WriteHive(t)
	data := shareddata.Dir(t)
	dl := filepath.Join(data, "delta", "golden", "dv-with-columnmapping")
	il := filepath.Join(data, "iceberg", "duckdb-iceberg", "data", "persistent", "equality_deletes", "warehouse", "mydb", "mytable", "metadata", "v7.metadata.json")
	return []table{
		{"hive", "parquet", hive, func(ctx context.Context) (*source.Listing, error) { return source.Resolve(ctx, storage.Local{}, hive) }},
		{"delta", "delta", dl, func(ctx context.Context) (*source.Listing, error) {
			return delta.Open(ctx, storage.Local{}, dl, source.AsOf{})
		}},
		{"iceberg", "iceberg", il, func(ctx context.Context) (*source.Listing, error) {
			return iceberg.Open(ctx, storage.Local{}, il, source.AsOf{})
		}},
	}
}

// analyze runs the distributed full read of rec's zones through execute and applies
// its results to rec.
func analyze(t *testing.T, ctx context.Context, tb table, l *source.Listing, rec *stats.Record, v source.Version,
	execute func(context.Context, *beam.Pipeline) (beam.PipelineResult, error)) error {
	t.Helper()
	refs, err := dist.ZoneRefs(l, rec, dist.TableRefOf(tb.format, tb.location, l, v))
	if err != nil {
		t.Fatal(err)
	}
	job, err := dist.MarshalJob(nil, refs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jobPath, out := filepath.Join(dir, "job"), filepath.Join(dir, "results.txt")
	if err := os.WriteFile(jobPath, job, 0o644); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	if err := lorebeam.Analyze(s, jobPath, out, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := execute(ctx, p); err != nil {
		return err
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zones, cols, err := dist.ReadResults(ctx, f, len(rec.Zones), len(rec.Columns))
	if err != nil {
		t.Fatal(err)
	}
	return profile.Apply(l, rec, zones, cols)
}

func runTables(t *testing.T, execute func(context.Context, *beam.Pipeline) (beam.PipelineResult, error)) {
	ctx := context.Background()
	for _, tb := range tables(t) {
		t.Run(tb.name, func(t *testing.T) {
			l, err := tb.open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := disttest.FootersRecord(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if err := profile.Full(ctx, storage.Local{}, l, want, profile.Options{Threads: 2}); err != nil {
				t.Fatal(err)
			}
			rec, v, err := disttest.FootersRecord(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if err := analyze(t, ctx, tb, l, rec, v, execute); err != nil {
				t.Fatal(err)
			}
			disttest.SameRecord(t, rec, want)
		})
	}
}

// TestAnalyzeOnPrism: the record built through Beam's prism runner, in this process,
// equals the local full read's on a Hive table, a Delta table (deletion vectors,
// column mapping) and an Iceberg table (equality deletes).
func TestAnalyzeOnPrism(t *testing.T) {
	runTables(t, prism.Execute)
}

// TestAnalyzeOnJobServer: the same through a prism job server reached over the
// portable Job API (gRPC), as Flink's or Spark's would be.
func TestAnalyzeOnJobServer(t *testing.T) {
	server := beamtest.JobServer(t)
	endpoint, env := *jobopts.Endpoint, *jobopts.EnvironmentType
	*jobopts.Endpoint, *jobopts.EnvironmentType = server, "loopback"
	defer func() { *jobopts.Endpoint, *jobopts.EnvironmentType = endpoint, env }()
	runTables(t, universal.Execute)
}

// TestChangedFileFailsTheJob: a file rewritten after the run was planned fails the
// job, and the failure carries SOURCE_CHANGED back.
func TestChangedFileFailsTheJob(t *testing.T) {
	ctx := context.Background()
	dir, l, rec, v := disttest.Hive(t)
	tb := table{"hive", "parquet", dir, nil}
	path := l.Files[len(l.Files)-1].Info.Path
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	err = analyze(t, ctx, tb, l, rec, v, prism.Execute)
	if err == nil {
		t.Fatal("the job succeeded")
	}
	if code := lorebeam.CodeOf(err); code != errs.SourceChanged {
		t.Errorf("the job failed with %q (%v), want SOURCE_CHANGED", code, err)
	}
}

// TestBadJobs: a job that cannot be read, or is not a job, is refused before the
// pipeline runs, with its code.
func TestBadJobs(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("LDJ\x01\xff\xff\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]errs.Code{
		filepath.Join(dir, "missing"): errs.SourceUnavailable,
		garbage:                       errs.CorruptSource,
		empty:                         errs.CorruptSource,
	} {
		_, s := beam.NewPipelineWithRoot()
		err := lorebeam.Analyze(s, path, filepath.Join(dir, "results.txt"), 0)
		if code := errs.CodeOf(err); code != want {
			t.Errorf("%s: %v (%s), want %s", filepath.Base(path), err, code, want)
		}
	}
}
