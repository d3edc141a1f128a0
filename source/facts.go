package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// ListingFacts keeps what the footers of a Parquet listing's files say of the listing
// as a whole — the files' columns (unionSchema) and their rows — by the listing's
// version. Both are functions of the version alone (every file's path, size and
// change marker), so a statement over a listing seen before, in this process or an
// earlier one, knows its schema and rows from its listing: an answer from statistics
// then reads no footer at all, on object storage one LIST and nothing else.
// Implementations are safe for concurrent use; a fact that cannot be kept or read
// back is a miss, never an error.
type ListingFacts interface {
	Facts(key string) (fields []arrow.Field, rows int64, ok bool)
	Keep(key string, fields []arrow.Field, rows int64)
}

// factsKey is the key of a listing's facts: its location and version together, so
// that two locations whose files happen to digest alike never share facts.
func factsKey(location string, v Version) string {
	h := sha256.New()
	writeField(h, []byte(location))
	writeField(h, []byte(v.Kind))
	writeField(h, []byte(v.IdentitySHA256))
	return hex.EncodeToString(h.Sum(nil))
}

// FactsDir keeps listing facts as files in a directory, one per key: the columns as
// an Arrow IPC stream of no batches, the rows in its schema metadata. Files are
// written under a temporary name and renamed into place, so a reader sees a whole
// file or none.
type FactsDir string

const factsRows = "lore.listing_rows"

// Facts reads the facts kept under key.
func (d FactsDir) Facts(key string) ([]arrow.Field, int64, bool) {
	b, err := os.ReadFile(filepath.Join(string(d), key+".arrows"))
	if err != nil {
		return nil, 0, false
	}
	return decodeFacts(b)
}

// decodeFacts reads what encodeFacts wrote; anything else is a miss.
func decodeFacts(b []byte) (fields []arrow.Field, rows int64, ok bool) {
	defer func() {
		if recover() != nil { // the IPC reader panics on some malformed input
			fields, rows, ok = nil, 0, false
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, 0, false
	}
	defer r.Release()
	sch := r.Schema()
	v, found := sch.Metadata().GetValue(factsRows)
	rows, err = strconv.ParseInt(v, 10, 64)
	if !found || err != nil || rows < 0 {
		return nil, 0, false
	}
	return sch.Fields(), rows, true
}

// encodeFacts writes fields and rows as an IPC stream, or reports false when the
// stream would not read back as the same fields (a type IPC cannot carry, such as an
// extension type it does not know, is kept by no fact).
func encodeFacts(fields []arrow.Field, rows int64) (b []byte, ok bool) {
	defer func() {
		if recover() != nil { // the IPC writer panics on a type it cannot write
			b, ok = nil, false
		}
	}()
	md := arrow.NewMetadata([]string{factsRows}, []string{strconv.FormatInt(rows, 10)})
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(arrow.NewSchema(fields, &md)))
	if err := w.Close(); err != nil {
		return nil, false
	}
	back, n, same := decodeFacts(buf.Bytes())
	if !same || n != rows || len(back) != len(fields) {
		return nil, false
	}
	for i := range fields {
		if !fields[i].Equal(back[i]) {
			return nil, false
		}
	}
	return buf.Bytes(), true
}

// Keep writes the facts of key.
func (d FactsDir) Keep(key string, fields []arrow.Field, rows int64) {
	b, ok := encodeFacts(fields, rows)
	if !ok {
		return
	}
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(string(d), key+".*.tmp")
	if err != nil {
		return
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), filepath.Join(string(d), key+".arrows")) != nil {
		os.Remove(tmp.Name())
		return
	}
	if factsKept.Add(1)%factsCheckEvery == 0 {
		d.prune(MaxFacts)
	}
}

// MaxFacts bounds the listings a FactsDir keeps: past it, the least recently written
// go (a listing's facts are rewritten only when it has a new version, so the oldest
// are of versions long gone).
const MaxFacts = 4096

// factsCheckEvery is how many facts are kept between two looks at a FactsDir's size.
const factsCheckEvery = 64

var factsKept atomic.Int64

// prune removes the oldest facts until at most limit are left.
func (d FactsDir) prune(limit int) {
	entries, err := os.ReadDir(string(d))
	if err != nil || len(entries) <= limit {
		return
	}
	type kept struct {
		name string
		at   time.Time
	}
	var ks []kept
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".arrows") {
			ks = append(ks, kept{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(ks, func(a, b kept) int { return a.at.Compare(b.at) })
	for _, k := range ks[:max(0, len(ks)-limit)] {
		os.Remove(filepath.Join(string(d), k.name))
	}
}
