package deletes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

// z85EncodeZeroPadded is the Delta/Spark form: pad with zero bytes to a multiple of 4.
func z85EncodeZeroPadded(b []byte) string {
	padded := append(slices.Clone(b), make([]byte, (4-len(b)%4)%4)...)
	var sb strings.Builder
	for i := 0; i < len(padded); i += 4 {
		sb.WriteString(z85Digits(uint64(binary.BigEndian.Uint32(padded[i:])), 5))
	}
	return sb.String()
}

// z85EncodeHashPadded is the Rust form: a short final group of k bytes is a k+1 digit
// number after 4-k '#' characters.
func z85EncodeHashPadded(b []byte) string {
	whole := len(b) / 4 * 4
	s := z85EncodeZeroPadded(b[:whole])
	if k := len(b) - whole; k > 0 {
		var v uint64
		for _, c := range b[whole:] {
			v = v<<8 | uint64(c)
		}
		s += strings.Repeat("#", 4-k) + z85Digits(v, k+1)
	}
	return s
}

func z85Digits(v uint64, n int) string {
	d := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		d[i] = z85Alphabet[v%85]
		v /= 85
	}
	return string(d)
}

func TestZ85Decode(t *testing.T) {
	// The test vector of the Z85 specification.
	got, err := Z85Decode("HelloWorld", 8)
	if err != nil || !bytes.Equal(got, []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}) {
		t.Fatalf("HelloWorld = %x, %v", got, err)
	}
	// The Rust writer's tail from kernel-rs/cdf-table-with-dv version 5.
	got, err = Z85Decode("##093", 2)
	if err != nil || !bytes.Equal(got, []byte{3, 0}) {
		t.Fatalf(`"##093" = %x, %v; want 03 00`, got, err)
	}
	for n := 0; n < 40; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + n)
		}
		for _, s := range []string{z85EncodeZeroPadded(b), z85EncodeHashPadded(b)} {
			got, err := Z85Decode(s, n)
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("%d bytes from %q = %x, %v; want %x", n, s, got, err, b)
			}
		}
	}
	bad := []struct {
		s    string
		size int
	}{
		{"HelloWorl", 8},   // wrong length
		{"HelloWorld", 9},  // wrong length for the size
		{"Hello World", 8}, // not in the alphabet (and wrong length)
		{"Hello\"orld", 8}, // not in the alphabet
		{"#####", 4},       // a whole group above 2^32
		{"%nSc1", 4},       // 2^32 exactly
		{"###4z", 1},       // 1 byte written as a value above 255
		{"#0093", 2},       // wrong number of '#' for 2 bytes
		{"00001", 3},       // zero-padded form with non-zero padding
		{"abc", -1},
	}
	for _, c := range bad {
		if _, err := Z85Decode(c.s, c.size); !errors.Is(err, errs.ErrCorruptSource) {
			t.Errorf("Z85Decode(%q, %d) = %v, want CORRUPT_SOURCE", c.s, c.size, err)
		}
	}
}

func TestDVPath(t *testing.T) {
	off := int32(1)
	u := DV{StorageType: "u", PathOrInlineDv: "vBn[lx{q8@P<9BNH/isA", Offset: &off, SizeInBytes: 36, Cardinality: 2}
	want := "/t/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
	if got, err := u.Path("/t/"); err != nil || got != want {
		t.Errorf("Path = %q, %v; want %q", got, err, want)
	}
	u.PathOrInlineDv = "ab" + u.PathOrInlineDv
	if got, err := u.Path("/t"); err != nil || got != "/t/ab/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin" {
		t.Errorf("Path with a random prefix = %q, %v", got, err)
	}
	if got := u.ID(); got != "uabvBn[lx{q8@P<9BNH/isA@1" {
		t.Errorf("ID = %q", got)
	}
	if (DV{}).ID() != "" || (DV{StorageType: "i", PathOrInlineDv: "x"}).ID() != "ix" {
		t.Error("ID of no DV or of an inline DV")
	}
	for _, c := range []struct{ in, want string }{
		{"file:/data/t/dv%20x.bin", "/data/t/dv x.bin"},
		{"file:///data/t/x.bin", "/data/t/x.bin"},
		{"/data/t/x.bin", "/data/t/x.bin"},
		{"s3://bucket/t/x.bin", "s3://bucket/t/x.bin"},
	} {
		if got, err := (DV{StorageType: "p", PathOrInlineDv: c.in}).Path("/t"); err != nil || got != c.want {
			t.Errorf("Path(p %q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, d := range []DV{
		{StorageType: "u", PathOrInlineDv: "short"},
		{StorageType: "u", PathOrInlineDv: "../vBn[lx{q8@P<9BNH/isA"},
		{StorageType: "u", PathOrInlineDv: "..vBn[lx{q8@P<9BNH/isA"},
		{StorageType: "u", PathOrInlineDv: "vBn[lx{q8@P<9BNH/is\""},
		{StorageType: "p", PathOrInlineDv: "relative/x.bin"},
		{StorageType: "p", PathOrInlineDv: "file://otherhost/x.bin"},
		{StorageType: "x", PathOrInlineDv: "vBn[lx{q8@P<9BNH/isA"},
	} {
		if p, err := d.Path("/t"); !errors.Is(err, errs.ErrCorruptSource) {
			t.Errorf("Path(%+v) = %q, %v; want CORRUPT_SOURCE", d, p, err)
		}
	}
}

// action is the part of a Delta log line these tests replay.
type action struct {
	Add    *fileAction `json:"add"`
	Remove *fileAction `json:"remove"`
}

type fileAction struct {
	Path           string `json:"path"`
	DeletionVector *DV    `json:"deletionVector"`
}

// replayDVs replays the JSON commits 0..version of a Delta table (all present in these
// fixtures, so no checkpoint is needed) and returns the deletion vectors of the live
// files, keyed by path and DV ID as the protocol keys files. version < 0 is the latest.
func replayDVs(t *testing.T, table string, version int) map[string]DV {
	t.Helper()
	commits, err := filepath.Glob(filepath.Join(table, "_delta_log", "*.json"))
	if err != nil || len(commits) == 0 {
		t.Fatalf("no commits in %s: %v", table, err)
	}
	sort.Strings(commits)
	live := map[string]*fileAction{}
	for v, c := range commits {
		if version >= 0 && v > version {
			break
		}
		if want := filepath.Join(table, "_delta_log", fmt.Sprintf("%020d.json", v)); c != want {
			t.Fatalf("commit %d missing (found %s)", v, c)
		}
		f, err := os.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var a action
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			if a.Add != nil {
				live[fileKey(a.Add)] = a.Add
			}
			if a.Remove != nil {
				delete(live, fileKey(a.Remove))
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]DV{}
	for k, a := range live {
		if a.DeletionVector != nil {
			out[k] = *a.DeletionVector
		}
	}
	return out
}

func fileKey(a *fileAction) string {
	id := ""
	if a.DeletionVector != nil {
		id = a.DeletionVector.ID()
	}
	return a.Path + "\x00" + id
}

// TestDeltaTables decodes every deletion vector of the latest snapshot of each Delta
// fixture with deletion vectors and checks their total against the rows DuckDB found
// deleted (facts.json), and the exact positions where the manifest states them.
func TestDeltaTables(t *testing.T) {
	facts := deltaFacts(t)
	root := filepath.Join(sharedData(t), "delta")
	positions := map[string][]int64{ // the one DV of tables with a single DV
		"delta-rs/table-with-dv-small": {0, 9},
		"kernel-rs/with-short-dv":      {0, 1, 2},
	}
	for _, table := range []string{
		"delta-rs/table-with-dv-small",
		"kernel-rs/with-short-dv",
		"golden/dv-partitioned-with-checkpoint",
		"golden/dv-with-columnmapping",
		"golden/log-replay-dv-key-cases",
		"delta-rs/table_with_deletion_logs",
		"kernel-rs/cdf-table-with-dv",
	} {
		t.Run(table, func(t *testing.T) {
			want, ok := facts[table]
			if !ok {
				t.Fatalf("%s not in facts.json", table)
			}
			dir := filepath.Join(root, table)
			dvs := replayDVs(t, dir, -1)
			var total int64
			var all []*Positions
			for key, dv := range dvs {
				p, err := dv.Read(context.Background(), storage.Local{}, dir)
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				total += p.Len()
				all = append(all, p)
			}
			if total != want {
				t.Errorf("%d rows deleted by %d DVs, facts.json says %d", total, len(dvs), want)
			}
			if pos, ok := positions[table]; ok {
				if len(all) != 1 || !slices.Equal(all[0].AppendTo(nil), pos) {
					t.Errorf("deleted positions differ, want %v", pos)
				}
			}
		})
	}
}

// TestDeltaInlineVersions replays kernel-rs/cdf-table-with-dv to each version: versions
// 1-2 have a file DV, 3-5 inline ones, and version 5's text ends in the Rust writer's
// '#'-padded group ("...##093").
func TestDeltaInlineVersions(t *testing.T) {
	dir := filepath.Join(sharedData(t), "delta", "kernel-rs", "cdf-table-with-dv")
	want := map[int][]int64{0: nil, 1: {0, 9}, 2: nil, 3: {0, 1, 4, 5}, 4: {0, 5}, 5: {3}, 6: nil}
	for v := 0; v <= 6; v++ {
		dvs := replayDVs(t, dir, v)
		var ps []*Positions
		for key, dv := range dvs {
			p, err := dv.Read(context.Background(), storage.Local{}, dir)
			if err != nil {
				t.Fatalf("version %d, %s: %v", v, key, err)
			}
			ps = append(ps, p)
		}
		if got := Union(ps...).AppendTo(nil); !slices.Equal(got, want[v]) {
			t.Errorf("version %d: deleted %v, want %v", v, got, want[v])
		}
		if v == 5 {
			for _, dv := range dvs {
				if !strings.Contains(dv.PathOrInlineDv, "##") || dv.SizeInBytes%4 == 0 {
					t.Errorf("version 5's DV %q is not the '#'-padded form this test is about", dv.PathOrInlineDv)
				}
				// The same bytes in the Delta/Spark zero-padded form decode alike.
				raw, err := Z85Decode(dv.PathOrInlineDv, int(dv.SizeInBytes))
				if err != nil {
					t.Fatal(err)
				}
				java := dv
				java.PathOrInlineDv = z85EncodeZeroPadded(raw)
				if java.PathOrInlineDv == dv.PathOrInlineDv {
					t.Fatal("the two encodings are the same")
				}
				p, err := java.Read(context.Background(), nil, "")
				if err != nil || !slices.Equal(p.AppendTo(nil), []int64{3}) {
					t.Errorf("zero-padded form: %v, %v", p.AppendTo(nil), err)
				}
			}
		}
	}
}

// writeDVFile writes a Delta deletion vector file holding vector (magic and bitmap) at
// offset 1 and returns its path.
func writeDVFile(t *testing.T, dir string, vector []byte, mutate func([]byte)) string {
	t.Helper()
	b := []byte{deltaFileVersion}
	b = binary.BigEndian.AppendUint32(b, uint32(len(vector)))
	b = append(b, vector...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(vector))
	if mutate != nil {
		mutate(b)
	}
	p := filepath.Join(dir, "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDVReadRejects(t *testing.T) {
	dir := t.TempDir()
	vector := binary.LittleEndian.AppendUint32(nil, deltaMagic)
	vector = append(vector, encodeRoaring64([]int64{0, 9}, false)...)
	one := int32(1)
	dv := DV{StorageType: "u", PathOrInlineDv: "vBn[lx{q8@P<9BNH/isA", Offset: &one, SizeInBytes: int32(len(vector)), Cardinality: 2}
	ctx := context.Background()
	writeDVFile(t, dir, vector, nil)
	if p, err := dv.Read(ctx, storage.Local{}, dir); err != nil || !slices.Equal(p.AppendTo(nil), []int64{0, 9}) {
		t.Fatalf("sound file: %v, %v", p.AppendTo(nil), err)
	}
	cases := []struct {
		name   string
		mutate func([]byte)
		dv     func(DV) DV
	}{
		{"version", func(b []byte) { b[0] = 2 }, nil},
		{"checksum", func(b []byte) { b[len(b)-1] ^= 1 }, nil},
		{"bitmap byte", func(b []byte) { b[len(b)-6] ^= 0x10 }, nil},
		{"stored size", func(b []byte) { b[4]++ }, nil},
		{"magic", func(b []byte) { b[5]++ }, nil},
		{"cardinality", nil, func(d DV) DV { d.Cardinality = 3; return d }},
		{"size past the end", nil, func(d DV) DV { d.SizeInBytes = 1 << 30; return d }},
		{"offset past the end", nil, func(d DV) DV { o := int32(1 << 30); d.Offset = &o; return d }},
		{"offset on the version", nil, func(d DV) DV { o := int32(0); d.Offset = &o; return d }},
		{"negative offset", nil, func(d DV) DV { o := int32(-5); d.Offset = &o; return d }},
		{"tiny size", nil, func(d DV) DV { d.SizeInBytes = 2; return d }},
	}
	for _, c := range cases {
		writeDVFile(t, dir, vector, c.mutate)
		d := dv
		if c.dv != nil {
			d = c.dv(d)
		}
		if _, err := d.Read(ctx, storage.Local{}, dir); !errors.Is(err, errs.ErrCorruptSource) {
			t.Errorf("%s: %v, want CORRUPT_SOURCE", c.name, err)
		}
	}
	// A missing file is unavailable, not corrupt.
	os.Remove(writeDVFile(t, dir, vector, nil))
	if _, err := dv.Read(ctx, storage.Local{}, dir); !errors.Is(err, errs.ErrSourceUnavailable) {
		t.Errorf("missing file: %v, want SOURCE_UNAVAILABLE", err)
	}
	// An inline vector whose text has the wrong magic or lies about its cardinality.
	inline := DV{StorageType: "i", PathOrInlineDv: z85EncodeHashPadded(vector), SizeInBytes: int32(len(vector)), Cardinality: 2}
	if _, err := inline.Read(ctx, nil, ""); err != nil {
		t.Fatalf("sound inline vector: %v", err)
	}
	inline.Cardinality = 1
	if _, err := inline.Read(ctx, nil, ""); !errors.Is(err, errs.ErrCorruptSource) {
		t.Errorf("inline cardinality: %v", err)
	}
}
