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
	"github.com/loredb/lore/source"
)

func init() {
	register.DoFn3x1[context.Context, []byte, func(int, []byte), error](&sampleFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func([]byte), error](&splitFn{})
	register.DoFn5x1[context.Context, []byte, []byte, func(string), func(int, []byte), error](&routeFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(string), error](&writeFn{})
	register.Emitter1[string]()
	register.Emitter1[[]byte]()
	register.Emitter2[int, []byte]()
	register.Iter1[[]byte]()
}

// Optimize adds to s the pipeline of a distributed OPTIMIZE of one directory: the
// job file job (dist.MarshalJob's form) holds the sort (dist.SortSpec) and the
// zones of the files rewritten. Every zone's key is sampled (sampleFn), the samples
// gathered on one worker choose the cuts between ranges (splitFn), every zone is
// sorted and cut into pieces by range (routeFn, the cuts a side input), each range's
// pieces are gathered on one worker, sorted and written into the staging directory
// (writeFn); one line per zone (its time) and one per range (its files) go to the
// file results (dist.ReadSortResults reads it back). memoryLimit bounds what a
// worker's sort holds before it spills (0: no limit).
func Optimize(s beam.Scope, job, results string, memoryLimit int64) error {
	work, zones, err := readJob(context.Background(), job)
	if err != nil {
		return err
	}
	if len(zones) == 0 || !dist.IsSort(work) {
		return errs.New(errs.Internal, "BUG: a distributed OPTIMIZE of no zones, or without its sort")
	}
	s = s.Scope("lore.optimize")
	descs := beam.ParDo(s, &jobFn{Job: job}, beam.Impulse(s))
	descs = beam.Reshuffle(s, descs)
	samples := beam.GroupByKey(s, beam.ParDo(s, &sampleFn{Sort: work, MemoryLimit: memoryLimit}, descs))
	cuts := beam.ParDo(s, &splitFn{Sort: work}, samples)
	timeLines, pieces := beam.ParDo2(s, &routeFn{Sort: work, MemoryLimit: memoryLimit}, descs, beam.SideInput{Input: cuts})
	rangeLines := beam.ParDo(s, &writeFn{Sort: work, MemoryLimit: memoryLimit}, beam.GroupByKey(s, pieces))
	textio.Write(s, results, beam.Flatten(s, timeLines, rangeLines))
	return nil
}

// sortOf decodes a job's sort once per instance of a function.
type sortOf struct {
	once sync.Once
	spec *dist.SortSpec
	err  error
}

func (o *sortOf) get(b []byte) (*dist.SortSpec, error) {
	o.once.Do(func() { o.spec, o.err = dist.UnmarshalSortSpec(b) })
	return o.spec, o.err
}

// zone decodes the sort from b and the zone from desc, as a worker's failure.
func (o *sortOf) zone(b, desc []byte) (*dist.SortSpec, *source.ZoneRef, error) {
	spec, err := o.get(b)
	if err != nil {
		return nil, nil, failure(err)
	}
	z, err := source.UnmarshalZoneRef(desc)
	if err != nil {
		return nil, nil, failure(err)
	}
	return spec, z, nil
}

// sampleFn samples one zone's keys, under the one key every sample is gathered by.
type sampleFn struct {
	Sort        []byte `json:"sort"`
	MemoryLimit int64  `json:"memory_limit"`
	spec        sortOf
}

func (f *sampleFn) ProcessElement(ctx context.Context, desc []byte, emit func(int, []byte)) error {
	spec, z, err := f.spec.zone(f.Sort, desc)
	if err != nil {
		return err
	}
	b, err := dist.SampleZone(ctx, spec, z, f.MemoryLimit)
	if err != nil {
		return failure(err)
	}
	emit(0, b)
	return nil
}

// splitFn chooses the cuts between ranges from every zone's sample.
type splitFn struct {
	Sort []byte `json:"sort"`
	spec sortOf
}

func (f *splitFn) ProcessElement(ctx context.Context, _ int, samples func(*[]byte) bool, emit func([]byte)) error {
	spec, err := f.spec.get(f.Sort)
	if err != nil {
		return failure(err)
	}
	var all [][]byte
	var b []byte
	for samples(&b) {
		all = append(all, b)
	}
	cuts, err := dist.Splitters(spec, all)
	if err != nil {
		return failure(err)
	}
	emit(cuts)
	return nil
}

// routeFn sorts one zone and cuts it at the cuts: it emits the zone's time line and
// a piece for every range that holds some of its rows, keyed by the range.
type routeFn struct {
	Sort        []byte `json:"sort"`
	MemoryLimit int64  `json:"memory_limit"`
	spec        sortOf
}

func (f *routeFn) ProcessElement(ctx context.Context, desc []byte, cuts []byte, timeLine func(string), piece func(int, []byte)) error {
	start := time.Now()
	spec, z, err := f.spec.zone(f.Sort, desc)
	if err != nil {
		return err
	}
	pieces, err := dist.RouteZone(ctx, spec, z, cuts, f.MemoryLimit)
	if err != nil {
		return failure(err)
	}
	for _, p := range pieces {
		piece(p.Range, p.Rows)
	}
	timeLine(dist.TimeLine(z.Zone, time.Since(start)))
	return nil
}

// writeFn sorts the pieces of one range and writes them; it emits the range's line.
type writeFn struct {
	Sort        []byte `json:"sort"`
	MemoryLimit int64  `json:"memory_limit"`
	spec        sortOf
}

func (f *writeFn) ProcessElement(ctx context.Context, r int, pieces func(*[]byte) bool, line func(string)) error {
	spec, err := f.spec.get(f.Sort)
	if err != nil {
		return failure(err)
	}
	files, err := dist.WriteRange(ctx, spec, r, func() ([]byte, bool) {
		var b []byte
		ok := pieces(&b)
		return b, ok
	}, f.MemoryLimit)
	if err != nil {
		return failure(err)
	}
	line(dist.RangeLine(r, files))
	return nil
}
