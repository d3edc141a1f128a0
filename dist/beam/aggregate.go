package lorebeam

import (
	"context"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/plan"
	"github.com/loredb/lore/source"
)

func init() {
	register.DoFn4x1[context.Context, []byte, func(string), func(int, []byte), error](&partialFn{})
	register.Combiner1[[]byte](&mergeFn{})
	register.Function2x1(partialLine)
}

// Aggregate adds to s the pipeline of a distributed aggregate: the job file job
// (dist.MarshalJob's form) holds the plan fragment — an aggregate over one table's
// scan — and the zones the coordinator left to read. Its zones are spread over the
// workers, each zone read by the fragment into a partial (partialFn), the partials
// merged into one (mergeFn, combined as the runner lifts it: within a worker first),
// and one line per zone (its time) and the merged partial's line written to the file
// results (dist.ReadPartialResults reads it back). memoryLimit bounds what a worker
// holds for one zone (0: no limit).
func Aggregate(s beam.Scope, job, results string, memoryLimit int64) error {
	fragment, zones, err := readJob(context.Background(), job)
	if err != nil {
		return err
	}
	if len(zones) == 0 || len(fragment) == 0 {
		return errs.New(errs.Internal, "BUG: a distributed aggregate of no zones, or without its plan fragment")
	}
	s = s.Scope("lore.aggregate")
	descs := beam.ParDo(s, &jobFn{Job: job}, beam.Impulse(s))
	descs = beam.Reshuffle(s, descs)
	timeLines, partials := beam.ParDo2(s, &partialFn{Fragment: fragment, MemoryLimit: memoryLimit}, descs)
	merged := beam.CombinePerKey(s, &mergeFn{Fragment: fragment}, partials)
	partialLines := beam.ParDo(s, partialLine, merged)
	textio.Write(s, results, beam.Flatten(s, timeLines, partialLines))
	return nil
}

// partialFn reads one zone with the fragment: it emits the zone's time line and its
// partial, under the one key every partial is merged by.
type partialFn struct {
	Fragment    []byte `json:"fragment"`
	MemoryLimit int64  `json:"memory_limit"`
}

func (f *partialFn) ProcessElement(ctx context.Context, desc []byte, timeLine func(string), partial func(int, []byte)) error {
	start := time.Now()
	z, err := source.UnmarshalZoneRef(desc)
	if err != nil {
		return failure(err)
	}
	p, err := dist.RunZone(ctx, f.Fragment, z, f.MemoryLimit)
	if err != nil {
		return failure(err)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		return failure(err)
	}
	timeLine(dist.TimeLine(z.Zone, time.Since(start)))
	partial(0, b)
	return nil
}

// mergeFn merges two partials of the fragment's aggregate, each in its byte form.
// The fragment is decoded once per instance, at its first merge.
type mergeFn struct {
	Fragment []byte `json:"fragment"`

	once sync.Once
	agg  *plan.Aggregate
	err  error
}

func (f *mergeFn) MergeAccumulators(a, b []byte) ([]byte, error) {
	f.once.Do(func() { f.agg, _, f.err = dist.UnmarshalFragment(f.Fragment) })
	if f.err != nil {
		return nil, failure(f.err)
	}
	m, err := dist.MergeForms(f.agg, a, b)
	if err != nil {
		return nil, failure(err)
	}
	return m, nil
}

func partialLine(_ int, b []byte) string { return dist.PartialLine(b) }
