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
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"

	// Results are written to local files, or to object storage by a runner with
	// that file system.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
)

func init() {
	register.DoFn4x1[context.Context, []byte, func(string), func(int, []byte), error](&profileFn{})
	register.Emitter1[string]()
	register.Emitter2[int, []byte]()
	register.Function2x2(mergeProfiles)
	register.Function2x2(columnLine)
}

// Analyze adds to s the pipeline of a distributed full ANALYZE over the zones of job
// (dist.MarshalJob's form): every zone read by a worker (profileFn), every column's
// profiles merged by column, and one line per zone and per column written to the
// file results (dist.ReadResults reads it back). memoryLimit bounds what a worker
// holds for one zone (0: no limit).
func Analyze(s beam.Scope, job []byte, results string, memoryLimit int64) error {
	zones, err := dist.UnmarshalJob(job)
	if err != nil {
		return err
	}
	if len(zones) == 0 {
		return errs.New(errs.Internal, "BUG: a distributed ANALYZE of no zones")
	}
	s = s.Scope("lore.analyze")
	// Zones are spread over the workers: a runner otherwise fuses the read into the
	// step that made the list, one bundle on one worker.
	descs := beam.Reshuffle(s, beam.CreateList(s, zones))
	zoneLines, columns := beam.ParDo2(s, &profileFn{MemoryLimit: memoryLimit}, descs)
	merged := beam.CombinePerKey(s, mergeProfiles, columns)
	columnLines := beam.ParDo(s, columnLine, merged)
	textio.Write(s, results, beam.Flatten(s, zoneLines, columnLines))
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
