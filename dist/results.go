package dist

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/wire"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
)

// A job is the work of a run, as the coordinator hands it to the runner: what is
// done with the zones — nothing for a full ANALYZE, which profiles them; the plan
// fragment each is read with for an aggregate; the sort for an OPTIMIZE — and the
// zones:
//
//	"LDJ" jobVersion     four bytes
//	work                 length-prefixed: empty, MarshalFragment's form or a
//	                     SortSpec's
//	zones                uvarint count, then each zone's descriptor
//	                     (source.ZoneRef's form), length-prefixed
const jobVersion = 3

var jobForm = wire.Form{Magic: [3]byte{'L', 'D', 'J'}, Version: jobVersion, What: "a job"}

// MarshalJob returns the byte form of a job of zones, work done with each: a plan
// fragment (MarshalFragment's form), a sort (SortSpec's), or nil for a full ANALYZE.
func MarshalJob(work []byte, zones []source.ZoneRef) ([]byte, error) {
	w := jobForm.Writer()
	w.Bytes(work)
	w.Uvarint(uint64(len(zones)))
	for i := range zones {
		b, err := zones[i].MarshalBinary()
		if err != nil {
			return nil, err
		}
		w.Bytes(b)
	}
	return w.B, nil
}

// UnmarshalJob reads a job's byte form: its work (empty for a full ANALYZE) and the
// zones' descriptors, each still in its own byte form (workers decode them); bytes
// that are not a job are CORRUPT_SOURCE.
func UnmarshalJob(b []byte) (work []byte, zones [][]byte, err error) {
	r, err := jobForm.Reader(b)
	if err != nil {
		return nil, nil, err
	}
	work = r.Bytes()
	zones = make([][]byte, r.Count(1))
	for i := range zones {
		zones[i] = r.Bytes()
	}
	if err := r.End(); err != nil {
		return nil, nil, err
	}
	switch {
	case len(work) == 0:
	case IsSort(work):
		if _, err := UnmarshalSortSpec(work); err != nil {
			return nil, nil, err
		}
	default:
		if _, _, err := UnmarshalFragment(work); err != nil {
			return nil, nil, err
		}
	}
	for _, z := range zones {
		if _, err := source.UnmarshalZoneRef(z); err != nil {
			return nil, nil, err
		}
	}
	return work, zones, nil
}

// Results are written as lines of text, one per zone and one per column, in any
// order: "z", the zone's index and its result's byte form (profile.ZoneResult,
// without sketches), or "c", the table column's index and its profile merged over
// every zone (stats.ColumnProfile); tab-separated, the bytes in standard base64.

// ZoneLine is the line of zone's result; its sketches are left out (the merged
// column profiles carry them).
func ZoneLine(zone int, res *profile.ZoneResult) (string, error) {
	bare := profile.ZoneResult{Rows: res.Rows, Columns: make([]stats.ColumnProfile, len(res.Columns))}
	for i, c := range res.Columns {
		c.HLL, c.KLL = nil, nil
		bare.Columns[i] = c
	}
	b, err := bare.MarshalBinary()
	if err != nil {
		return "", err
	}
	return "z\t" + strconv.Itoa(zone) + "\t" + base64.StdEncoding.EncodeToString(b), nil
}

// ColumnLine is the line of column col's merged profile.
func ColumnLine(col int, p *stats.ColumnProfile) (string, error) {
	b, err := p.MarshalBinary()
	if err != nil {
		return "", err
	}
	return "c\t" + strconv.Itoa(col) + "\t" + base64.StdEncoding.EncodeToString(b), nil
}

// ReadResults reads the lines of a run over zones zones of a table of columns
// columns: every zone's result exactly once, every column's profile at most once (a
// column no line names has the profile of no zone). Anything else is CORRUPT_SOURCE.
func ReadResults(ctx context.Context, r io.Reader, zones, columns int) ([]profile.ZoneResult, []stats.ColumnProfile, error) {
	zs := make([]profile.ZoneResult, zones)
	seenZ := make([]bool, zones)
	cs := make([]stats.ColumnProfile, columns)
	seenC := make([]bool, columns)
	err := readLines(ctx, r, func(kind string, i int, b []byte, bad func(string, ...any) error) error {
		switch kind {
		case "z":
			if i >= zones || seenZ[i] {
				return bad("zone %d of %d, or twice", i, zones)
			}
			res, err := profile.UnmarshalZoneResult(b)
			if err != nil {
				return err
			}
			zs[i], seenZ[i] = *res, true
		case "c":
			if i >= columns || seenC[i] {
				return bad("column %d of %d, or twice", i, columns)
			}
			p, err := stats.UnmarshalColumnProfile(b)
			if err != nil {
				return err
			}
			cs[i], seenC[i] = *p, true
		default:
			return bad("a line of kind %q", kind)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if err := allSeen(seenZ); err != nil {
		return nil, nil, err
	}
	return zs, cs, nil
}

func allSeen(seen []bool) error {
	for z, ok := range seen {
		if !ok {
			return errs.New(errs.CorruptSource, "the results of a run have no line for zone %d", z)
		}
	}
	return nil
}

// readLines calls each with every line of a run's results: its kind, index and
// bytes, and bad to report what is wrong with it.
func readLines(ctx context.Context, r io.Reader, each func(kind string, i int, b []byte, bad func(string, ...any) error) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<30)
	line := 0
	bad := func(format string, args ...any) error {
		return errs.New(errs.CorruptSource, "cannot read the results of a run, line %d: %s", line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		text := sc.Text()
		if text == "" {
			continue
		}
		parts := strings.Split(text, "\t")
		if len(parts) != 3 {
			return bad("%d fields, not 3", len(parts))
		}
		i, err := strconv.Atoi(parts[1])
		if err != nil || i < 0 {
			return bad("no index: %q", parts[1])
		}
		b, err := base64.StdEncoding.DecodeString(parts[2])
		if err != nil {
			return bad("%v", err)
		}
		if err := each(parts[0], i, b, bad); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return errs.New(errs.CorruptSource, "cannot read the results of a run: %w", err)
	}
	return nil
}

// The results of a distributed aggregate are a line per zone, "t", the zone's index
// and the microseconds its worker took to read it (a uvarint), and one line "p" 0
// and the partial merged over every zone (Partial's form).

// TimeLine is the line of the time a worker took over zone.
func TimeLine(zone int, took time.Duration) string {
	b := binary.AppendUvarint(nil, uint64(max(0, took.Microseconds())))
	return "t\t" + strconv.Itoa(zone) + "\t" + base64.StdEncoding.EncodeToString(b)
}

// zoneTimes are the times read from a run's "t" lines, one for each zone.
type zoneTimes struct {
	took []time.Duration
	seen []bool
}

// readTimedLines reads the lines of a run over zones zones: the "t" lines, every
// zone's exactly once, and any other kind through each. It returns the workers' time
// over each zone.
func readTimedLines(ctx context.Context, r io.Reader, zones int, each func(kind string, i int, b []byte, bad func(string, ...any) error) error) ([]time.Duration, error) {
	z := &zoneTimes{took: make([]time.Duration, zones), seen: make([]bool, zones)}
	err := readLines(ctx, r, func(kind string, i int, b []byte, bad func(string, ...any) error) error {
		if kind == "t" {
			return z.add(i, b, bad)
		}
		return each(kind, i, b, bad)
	})
	if err != nil {
		return nil, err
	}
	if err := allSeen(z.seen); err != nil {
		return nil, err
	}
	return z.took, nil
}

// add reads zone i's line, TimeLine's bytes b.
func (z *zoneTimes) add(i int, b []byte, bad func(string, ...any) error) error {
	if i >= len(z.took) || z.seen[i] {
		return bad("zone %d of %d, or twice", i, len(z.took))
	}
	us, n := binary.Uvarint(b)
	if n <= 0 || n != len(b) || us > math.MaxInt64/1000 {
		return bad("no time")
	}
	z.took[i], z.seen[i] = time.Duration(us)*time.Microsecond, true
	return nil
}

// PartialLine is the line of the merged partial in its byte form.
func PartialLine(partial []byte) string {
	return "p\t0\t" + base64.StdEncoding.EncodeToString(partial)
}

// ReadPartialResults reads the lines of a distributed aggregate over zones zones:
// every zone's time exactly once and the merged partial once. It returns the
// partial's byte form and the workers' time over each zone. Anything else is
// CORRUPT_SOURCE.
func ReadPartialResults(ctx context.Context, r io.Reader, zones int) ([]byte, []time.Duration, error) {
	var partial []byte
	took, err := readTimedLines(ctx, r, zones, func(kind string, i int, b []byte, bad func(string, ...any) error) error {
		switch kind {
		case "p":
			if i != 0 || partial != nil {
				return bad("a second partial")
			}
			partial = b
		default:
			return bad("a line of kind %q", kind)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if partial == nil {
		return nil, nil, errs.New(errs.CorruptSource, "the results of a run have no partial")
	}
	return partial, took, nil
}

// IsSort says whether a job's work is a sort (a distributed OPTIMIZE's).
func IsSort(work []byte) bool { return bytes.HasPrefix(work, sortForm.Magic[:]) }

// The results of a distributed OPTIMIZE are a line per zone, "t", as an
// aggregate's, and a line per range that holds rows, "w", the range's index and the
// files written for it, in order:
//
//	uvarint count, then each file's name in the staging directory
//	(length-prefixed), rows, row groups and bytes (uvarints)

// RangeLine is the line of the files written for range r.
func RangeLine(r int, files []parquet.WrittenFile) string {
	w := &wire.Writer{}
	w.Uvarint(uint64(len(files)))
	for _, f := range files {
		w.Bytes([]byte(filepath.Base(f.Path)))
		w.Uvarint(uint64(f.Rows))
		w.Uvarint(uint64(f.RowGroups))
		w.Uvarint(uint64(f.Bytes))
	}
	return "w\t" + strconv.Itoa(r) + "\t" + base64.StdEncoding.EncodeToString(w.B)
}

// ReadSortResults reads the lines of a distributed OPTIMIZE over zones zones cut
// into at most ranges ranges: every zone's time exactly once, every range's files at
// most once (a range no line names holds no row), each file named as
// RangeFileName names the range's. It returns the files of each range, their Path
// their name in the staging directory, and the workers' time over each zone.
// Anything else is CORRUPT_SOURCE.
func ReadSortResults(ctx context.Context, r io.Reader, zones, ranges int) ([][]parquet.WrittenFile, []time.Duration, error) {
	files := make([][]parquet.WrittenFile, ranges)
	wrote := make([]bool, ranges)
	took, err := readTimedLines(ctx, r, zones, func(kind string, i int, b []byte, bad func(string, ...any) error) error {
		switch kind {
		case "w":
			if i >= ranges || wrote[i] {
				return bad("range %d of %d, or twice", i, ranges)
			}
			rd := wire.NewReader(b, "a range's files")
			fs := make([]parquet.WrittenFile, rd.Count(4))
			for k := range fs {
				fs[k] = parquet.WrittenFile{Path: string(rd.Bytes()), Rows: int64(min(rd.Uvarint(), math.MaxInt64)),
					RowGroups: int(min(rd.Uvarint(), math.MaxInt32)), Bytes: int64(min(rd.Uvarint(), math.MaxInt64))}
				if rd.Err() == nil && fs[k].Path != RangeFileName(i, k+1) {
					return bad("range %d's file %d is %q, not %q", i, k+1, fs[k].Path, RangeFileName(i, k+1))
				}
			}
			if err := rd.End(); err != nil {
				return bad("%v", err)
			}
			files[i], wrote[i] = fs, true
		default:
			return bad("a line of kind %q", kind)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return files, took, nil
}
