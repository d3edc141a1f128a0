package gen

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
)

// EventsOptions configure Events.
type EventsOptions struct {
	// Rows is the total number of rows. Required (> 0).
	Rows int64
	// Files is the number of files; rows are spread evenly over them. Default: 1.
	Files int
	// Out is the directory the files are written to (created if needed). Required.
	Out string
	// ClusteredBy is "" (rows in random time order) or "ts": rows sorted by ts within
	// and across files, file k holding the k-th slice of the time range.
	ClusteredBy string
	// Seed selects the random streams. The same seed gives the same files.
	Seed int64
	// RowGroupRows is the number of rows per row group. Default: 1,048,576.
	RowGroupRows int
	// Progress, when set, is called as rows are written with the rows done so far
	// and the total. Calls are serialised.
	Progress func(done, total int64)
}

// The events time range: 2024-01-01 00:00:00 up to (excluding) 2024-04-01.
var (
	eventsStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	eventsEnd   = time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
)

// EventsSchema is the schema of the events table.
var EventsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: false},
	{Name: "user_id", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
	{Name: "category", Type: arrow.BinaryTypes.String, Nullable: false},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "latency_ms", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "status", Type: arrow.PrimitiveTypes.Int32, Nullable: false},
	{Name: "country", Type: arrow.BinaryTypes.String, Nullable: false},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

// Null fractions of the nullable columns.
const (
	amountNullFrac  = 0.01
	latencyNullFrac = 0.005
	flagNullFrac    = 0.02
)

// eventsBatch is the number of rows built per Arrow record. It affects memory use
// only: values are drawn row by row, so the files do not depend on it.
const eventsBatch = 64 * 1024

var categories = func() []string {
	c := make([]string, 50)
	for i := range c {
		c[i] = fmt.Sprintf("cat_%02d", i)
	}
	return c
}()

// countries, most frequent first; weights fall off roughly as 1/rank.
var countries = []string{
	"US", "DE", "GB", "FR", "IN", "BR", "JP", "CA", "NL", "ES",
	"IT", "AU", "SE", "PL", "MX", "KR", "CH", "BE", "AT", "NO",
	"DK", "FI", "IE", "PT", "CZ", "SG", "NZ", "AR", "ZA", "TR",
}

var countryCum = func() []float64 {
	cum := make([]float64, len(countries))
	sum := 0.0
	for i := range countries {
		sum += 1 / float64(i+1)
		cum[i] = sum
	}
	for i := range cum {
		cum[i] /= sum
	}
	return cum
}()

// statuses and their weights (percent).
var (
	statusCodes   = []int32{200, 201, 204, 301, 304, 400, 401, 403, 404, 500, 503}
	statusWeights = []float64{70, 5, 3, 2, 5, 4, 2, 2, 4, 2, 1}
	statusCum     = cumulative(statusWeights)
)

func cumulative(w []float64) []float64 {
	cum := make([]float64, len(w))
	sum := 0.0
	for i, x := range w {
		sum += x
		cum[i] = sum
	}
	for i := range cum {
		cum[i] /= sum
	}
	return cum
}

// pick returns the index of the first cumulative weight above u.
func pick(cum []float64, u float64) int {
	for i, c := range cum {
		if u < c {
			return i
		}
	}
	return len(cum) - 1
}

var partName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^part-\d{5}\.parquet$`) })

// IsPartFile reports whether name is the name of a data file the generators write
// (EventsFileName).
func IsPartFile(name string) bool { return partName().MatchString(name) }

// EventsFileName is the name of file k of a generated table.
func EventsFileName(k int) string { return fmt.Sprintf("part-%05d.parquet", k) }

// Events writes the synthetic events table (EventsSchema) as opts.Files Parquet
// files named part-00000.parquet, … in opts.Out, generating files in parallel. Any
// other part-NNNNN.parquet files already in opts.Out are removed, so that the
// directory holds exactly the generated table.
func Events(ctx context.Context, opts EventsOptions) error {
	if opts.Rows <= 0 {
		return errs.New(errs.Analysis, "gen events: rows must be positive, got %d", opts.Rows)
	}
	if opts.Files <= 0 {
		opts.Files = 1
	}
	if int64(opts.Files) > opts.Rows {
		return errs.New(errs.Analysis, "gen events: %d files for %d rows: every file needs a row", opts.Files, opts.Rows)
	}
	if opts.Out == "" {
		return errs.New(errs.Analysis, "gen events: an output directory is required")
	}
	switch opts.ClusteredBy {
	case "", "ts":
	default:
		return errs.New(errs.Analysis, "gen events: cannot cluster by %q (only ts)", opts.ClusteredBy)
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = parquet.WriteDefaultRowGroupRows
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return fmt.Errorf("cannot create %q: %w", opts.Out, err)
	}

	var (
		mu   sync.Mutex
		done int64
	)
	report := func(n int64) {
		if opts.Progress == nil {
			return
		}
		mu.Lock()
		done += n
		opts.Progress(done, opts.Rows)
		mu.Unlock()
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := min(opts.Files, runtime.GOMAXPROCS(0))
	next := make(chan int)
	errc := make(chan error, opts.Files)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				if err := writeEventsFile(ctx, opts, k, report); err != nil {
					errc <- err
					cancel()
				}
			}
		}()
	}
feed:
	for k := 0; k < opts.Files; k++ {
		select {
		case next <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return removeStaleParts(opts.Out, opts.Files)
}

// removeStaleParts deletes part files numbered files or higher left by an earlier run.
func removeStaleParts(dir string, files int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cannot list %q: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !IsPartFile(name) {
			continue
		}
		var k int
		if _, err := fmt.Sscanf(name, "part-%05d.parquet", &k); err != nil || k < files {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("cannot remove stale %q: %w", name, err)
		}
	}
	return nil
}

// eventsRows draws the rows of one file.
type eventsRows struct {
	r        *rand.Rand
	users    *rand.Zipf
	cats     *rand.Zipf
	n        int64 // rows in this file
	lo, hi   int64 // the file's ts range [lo, hi) in µs
	sorted   bool
	drawn    int64
	orderMax float64 // for sorted ts: the running maximum of the descending order statistics
}

func newEventsRows(opts EventsOptions, k int) *eventsRows {
	n := opts.Rows*int64(k+1)/int64(opts.Files) - opts.Rows*int64(k)/int64(opts.Files)
	// Each file has its own stream, so files can be written in any order.
	r := rand.New(rand.NewPCG(uint64(opts.Seed), 0x9E3779B97F4A7C15*uint64(k+1)))
	e := &eventsRows{
		r:     r,
		users: rand.NewZipf(r, 1.1, 5, 999_999),
		cats:  rand.NewZipf(r, 1.3, 3, uint64(len(categories)-1)),
		n:     n,
		lo:    eventsStart,
		hi:    eventsEnd,
	}
	if opts.ClusteredBy == "ts" {
		span := eventsEnd - eventsStart
		e.lo = eventsStart + span*int64(k)/int64(opts.Files)
		e.hi = eventsStart + span*int64(k+1)/int64(opts.Files)
		e.sorted = true
		e.orderMax = 1
	}
	return e
}

// ts draws the next timestamp. Sorted files draw uniform order statistics in
// increasing order one at a time (the maximum of m uniforms is U^(1/m)), so a file
// of any size is sorted without holding it in memory.
func (e *eventsRows) ts() int64 {
	width := float64(e.hi - e.lo)
	var u float64
	if e.sorted {
		remaining := float64(e.n - e.drawn)
		e.orderMax *= math.Pow(e.r.Float64(), 1/remaining)
		u = 1 - e.orderMax
	} else {
		u = e.r.Float64()
	}
	e.drawn++
	v := e.lo + int64(u*width)
	return min(max(v, e.lo), e.hi-1)
}

// round2 rounds to two decimals.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// fill draws rows into the builders, one full row at a time.
func (e *eventsRows) fill(b *array.RecordBuilder, rows int) {
	tsB := b.Field(0).(*array.TimestampBuilder)
	userB := b.Field(1).(*array.Int64Builder)
	catB := b.Field(2).(*array.StringBuilder)
	amtB := b.Field(3).(*array.Float64Builder)
	latB := b.Field(4).(*array.Float64Builder)
	stB := b.Field(5).(*array.Int32Builder)
	ctyB := b.Field(6).(*array.StringBuilder)
	flagB := b.Field(7).(*array.BooleanBuilder)
	for range rows {
		tsB.UnsafeAppend(arrow.Timestamp(e.ts()))
		userB.UnsafeAppend(int64(e.users.Uint64()) + 1)
		catB.Append(categories[e.cats.Uint64()])
		if e.r.Float64() < amountNullFrac {
			amtB.UnsafeAppendBoolToBitmap(false)
		} else {
			amtB.UnsafeAppend(round2(math.Exp(3 + e.r.NormFloat64())))
		}
		if e.r.Float64() < latencyNullFrac {
			latB.UnsafeAppendBoolToBitmap(false)
		} else {
			latB.UnsafeAppend(round2(math.Exp(3.5 + 0.8*e.r.NormFloat64())))
		}
		stB.UnsafeAppend(statusCodes[pick(statusCum, e.r.Float64())])
		ctyB.Append(countries[pick(countryCum, e.r.Float64())])
		if e.r.Float64() < flagNullFrac {
			flagB.UnsafeAppendBoolToBitmap(false)
		} else {
			flagB.UnsafeAppend(e.r.Float64() < 0.3)
		}
	}
}

func writeEventsFile(ctx context.Context, opts EventsOptions, k int, report func(int64)) error {
	rows := newEventsRows(opts, k)
	path := filepath.Join(opts.Out, EventsFileName(k))
	b := array.NewRecordBuilder(memory.DefaultAllocator, EventsSchema)
	defer b.Release()
	wopts := parquet.WriteOptions{RowGroupRows: int64(opts.RowGroupRows)}
	if opts.ClusteredBy != "" {
		// Readers may rely on the declared order; the sorted draw guarantees it.
		wopts.SortedBy = []string{opts.ClusteredBy}
	}
	err := parquet.WriteFile(path, EventsSchema, func(emit func(arrow.Record) error) error {
		for left := rows.n; left > 0; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := int(min(left, eventsBatch))
			for i := range b.Fields() {
				if i != 2 && i != 6 { // strings grow as appended
					b.Field(i).Reserve(n)
				}
			}
			rows.fill(b, n)
			rec := b.NewRecord()
			err := emit(rec)
			rec.Release()
			if err != nil {
				return err
			}
			left -= int64(n)
			report(int64(n))
		}
		return nil
	}, wopts)
	if err != nil {
		return fmt.Errorf("cannot write events file %d: %w", k, err)
	}
	return nil
}
