package dist

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/wire"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
)

// A job is the zones a run reads, as the coordinator hands them to the runner:
//
//	"LDJ" jobVersion     four bytes
//	zones                uvarint count, then each zone's descriptor
//	                     (source.ZoneRef's form), length-prefixed
const jobVersion = 1

var jobForm = wire.Form{Magic: [3]byte{'L', 'D', 'J'}, Version: jobVersion, What: "a job"}

// MarshalJob returns the byte form of a job of zones.
func MarshalJob(zones []source.ZoneRef) ([]byte, error) {
	w := jobForm.Writer()
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

// UnmarshalJob reads a job's byte form: the zones' descriptors, each still in its
// own byte form (workers decode them); bytes that are not a job are CORRUPT_SOURCE.
func UnmarshalJob(b []byte) ([][]byte, error) {
	r, err := jobForm.Reader(b)
	if err != nil {
		return nil, err
	}
	zones := make([][]byte, r.Count(1))
	for i := range zones {
		zones[i] = r.Bytes()
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	for _, z := range zones {
		if _, err := source.UnmarshalZoneRef(z); err != nil {
			return nil, err
		}
	}
	return zones, nil
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
				return nil, nil, err
			}
		}
		text := sc.Text()
		if text == "" {
			continue
		}
		parts := strings.Split(text, "\t")
		if len(parts) != 3 {
			return nil, nil, bad("%d fields, not 3", len(parts))
		}
		i, err := strconv.Atoi(parts[1])
		if err != nil || i < 0 {
			return nil, nil, bad("no index: %q", parts[1])
		}
		b, err := base64.StdEncoding.DecodeString(parts[2])
		if err != nil {
			return nil, nil, bad("%v", err)
		}
		switch parts[0] {
		case "z":
			if i >= zones || seenZ[i] {
				return nil, nil, bad("zone %d of %d, or twice", i, zones)
			}
			res, err := profile.UnmarshalZoneResult(b)
			if err != nil {
				return nil, nil, err
			}
			zs[i], seenZ[i] = *res, true
		case "c":
			if i >= columns || seenC[i] {
				return nil, nil, bad("column %d of %d, or twice", i, columns)
			}
			p, err := stats.UnmarshalColumnProfile(b)
			if err != nil {
				return nil, nil, err
			}
			cs[i], seenC[i] = *p, true
		default:
			return nil, nil, bad("a line of kind %q", parts[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, errs.New(errs.CorruptSource, "cannot read the results of a run: %w", err)
	}
	for z, ok := range seenZ {
		if !ok {
			return nil, nil, errs.New(errs.CorruptSource, "the results of a run have no line for zone %d", z)
		}
	}
	return zs, cs, nil
}
