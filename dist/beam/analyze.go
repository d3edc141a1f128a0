// Package lorebeam runs Lore's distributed work on Apache Beam: the same pipeline on
// Beam's local prism runner (in the process, or a job server over the portable Job
// API) and on the job servers of Dataflow, Flink and Spark. It holds no engine of its
// own: the coordinator (the lore engine) plans the zones and writes the record, and
// workers read zones with Lore's reader (package dist), never parsing SQL, so the
// pipeline builds without cgo.
package lorebeam

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"

	// Jobs are read, and results written, as local files (or files of a
	// shared mount).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
)

func init() {
	register.DoFn3x1[context.Context, []byte, func([]byte), error](&jobFn{})
	register.Emitter1[[]byte]()
	register.DoFn4x1[context.Context, []byte, func(string), func(int, []byte), error](&profileFn{})
	register.Emitter1[string]()
	register.Emitter2[int, []byte]()
	register.Function2x2(mergeProfiles)
	register.Function2x2(columnLine)
}

// Analyze adds to s the pipeline of a distributed full ANALYZE over the zones of the
// job file job (dist.MarshalJob's form, at a path of any file system Beam has, that
// every worker can read): the job read by one worker (jobFn) and its zones spread
// over all, every zone read by a worker (profileFn), every column's profiles merged
// by column, and one line per zone and per column written to the file results
// (dist.ReadResults reads it back). memoryLimit bounds what a worker holds for one
// zone (0: no limit). The job is read here too, to refuse a bad one before the run:
// the zones travel by the file, not in the pipeline, whose size runners bound.
func Analyze(s beam.Scope, job, results string, memoryLimit int64) error {
	fragment, zones, err := readJob(context.Background(), job)
	if err != nil {
		return err
	}
	if len(zones) == 0 || len(fragment) > 0 {
		return errs.New(errs.Internal, "BUG: a distributed ANALYZE of no zones, or with a plan fragment")
	}
	s = s.Scope("lore.analyze")
	descs := beam.ParDo(s, &jobFn{Job: job}, beam.Impulse(s))
	// Zones are spread over the workers: a runner otherwise fuses the reads into
	// the step that listed them, one bundle on one worker.
	descs = beam.Reshuffle(s, descs)
	zoneLines, columns := beam.ParDo2(s, &profileFn{MemoryLimit: memoryLimit}, descs)
	merged := beam.CombinePerKey(s, mergeProfiles, columns)
	columnLines := beam.ParDo(s, columnLine, merged)
	textio.Write(s, results, beam.Flatten(s, zoneLines, columnLines))
	return nil
}

// readJob reads the job file at path through Beam's file systems and returns its
// plan fragment and its zones' descriptors; a job that cannot be read is
// SOURCE_UNAVAILABLE, one that is not a job CORRUPT_SOURCE.
func readJob(ctx context.Context, path string) ([]byte, [][]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, nil, errs.New(errs.SourceUnavailable, "cannot read the job %q: %w", path, err)
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, nil, errs.New(errs.SourceUnavailable, "cannot read the job %q: %w", path, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, errs.New(errs.SourceUnavailable, "cannot read the job %q: %w", path, err)
	}
	return dist.UnmarshalJob(b)
}

// jobFn reads the job file and emits its zones' descriptors.
type jobFn struct {
	Job string `json:"job"`
}

func (f *jobFn) ProcessElement(ctx context.Context, _ []byte, emit func([]byte)) error {
	_, zones, err := readJob(ctx, f.Job)
	if err != nil {
		return failure(err)
	}
	for _, z := range zones {
		emit(z)
	}
	return nil
}

// profileFn reads one zone from its descriptor: it emits the zone's line (its result
// without sketches) and, for every table column, the column's profile of the zone,
// keyed by the column's index.
type profileFn struct {
	MemoryLimit int64 `json:"memory_limit"`
}

func (f *profileFn) ProcessElement(ctx context.Context, desc []byte, zoneLine func(string), column func(int, []byte)) error {
	z, err := source.UnmarshalZoneRef(desc)
	if err != nil {
		return failure(err)
	}
	res, err := dist.ReadZone(ctx, z, profile.Options{MemoryLimit: f.MemoryLimit})
	if err != nil {
		return failure(err)
	}
	line, err := dist.ZoneLine(z.Zone, res)
	if err != nil {
		return failure(err)
	}
	zoneLine(line)
	for c := range res.Columns {
		b, err := res.Columns[c].MarshalBinary()
		if err != nil {
			return failure(err)
		}
		column(c, b)
	}
	return nil
}

// mergeProfiles merges two profiles of one column, each in its byte form.
func mergeProfiles(a, b []byte) ([]byte, error) {
	pa, err := stats.UnmarshalColumnProfile(a)
	if err != nil {
		return nil, failure(err)
	}
	pb, err := stats.UnmarshalColumnProfile(b)
	if err != nil {
		return nil, failure(err)
	}
	pa.Merge(pb)
	return pa.MarshalBinary()
}

func columnLine(col int, b []byte) (string, error) {
	p, err := stats.UnmarshalColumnProfile(b)
	if err != nil {
		return "", failure(err)
	}
	return dist.ColumnLine(col, p)
}

// failure marks a worker's error with its code, which the runner's report of the
// failed job carries back to the coordinator (CodeOf).
func failure(err error) error {
	return fmt.Errorf("%s%s%s %w", codeOpen, errs.CodeOf(err), codeClose, err)
}

const codeOpen, codeClose = "[lore:", "]"

// CodeOf is the code of the first Lore error a failed job's report carries (a
// worker's, marked by failure), or "" when it carries none.
func CodeOf(err error) errs.Code {
	if err == nil {
		return ""
	}
	msg := err.Error()
	i := strings.Index(msg, codeOpen)
	if i < 0 {
		return ""
	}
	rest := msg[i+len(codeOpen):]
	j := strings.Index(rest, codeClose)
	if j <= 0 {
		return ""
	}
	return errs.Code(rest[:j])
}
