package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// A TPC-H file flavour is the same TPC-H data written the way another writer
// writes it, so that the harness measures Lore on files it did not write itself.
// Every flavour but "lore" is derived from the "lore" flavour's files (gen.TPCH),
// so the rows are identical across flavours and only the layout differs.

// Flavours are the TPC-H file flavours, in the order --flavour all runs them.
var Flavours = []string{"lore", "duckdb", "duckdb-snappy", "arrow", "spark", "small-files"}

// defaultSmallFiles is how many files the small-files flavour splits lineitem into;
// the other tables get files in proportion to their rows.
const defaultSmallFiles = 1000

// sparkRowsPerFile is about the rows one file of the spark flavour holds (the
// table's rows over it, rounded, make its files): a Spark job writes one file per
// task, and a task of a job reading the generated text holds about this many
// lineitem rows (lineitem at SF 1 makes 8 files).
const sparkRowsPerFile = 750_000

// sparkRowGroupBytes is parquet-mr's default row group size (parquet.block.size).
const sparkRowGroupBytes = 128 << 20

// pyarrowRowGroupRows is pyarrow's default largest row group (row_group_size).
const pyarrowRowGroupRows = 1 << 20

// validFlavour reports whether name is a flavour or "all".
func validFlavour(name string) bool {
	return name == "all" || slices.Contains(Flavours, name)
}

// flavourDir is the cache directory of a derived flavour's data set.
func flavourDir(dataDir string, sf float64, flavour string, smallFiles int) string {
	name := fmt.Sprintf("tpch-sf%s-%s", strconv.FormatFloat(sf, 'f', -1, 64), flavour)
	if flavour == "small-files" && smallFiles != defaultSmallFiles {
		name += "-" + strconv.Itoa(smallFiles)
	}
	return filepath.Join(dataDir, name)
}

// writeFlavour writes the derived flavour's tables under out/<table>/ from the
// lore flavour's data set at src.
func writeFlavour(ctx context.Context, flavour, src, out string, threads, smallFiles int) error {
	switch flavour {
	case "duckdb":
		return writeDuckDBFlavour(ctx, src, out, "zstd", threads)
	case "duckdb-snappy":
		return writeDuckDBFlavour(ctx, src, out, "snappy", threads)
	case "arrow", "spark", "small-files":
		for _, t := range tpchTables {
			l, err := arrowLayoutFor(flavour, filepath.Join(src, t), t, smallFiles, src)
			if err != nil {
				return fmt.Errorf("table %s: %w", t, err)
			}
			if err := rewriteTable(ctx, filepath.Join(src, t), filepath.Join(out, t), l); err != nil {
				return fmt.Errorf("table %s: %w", t, err)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown flavour %q", flavour)
}

// flavourAbout says which writer made a flavour's files and with which settings,
// for the suite's description.
func flavourAbout(flavour string, files, smallFiles int) string {
	switch flavour {
	case "lore":
		return fmt.Sprintf("written by gen.TPCH (Lore's writer), %d files per table", files)
	case "duckdb", "duckdb-snappy":
		codec := map[string]string{"duckdb": "zstd", "duckdb-snappy": "snappy"}[flavour]
		return fmt.Sprintf("written by DuckDB's COPY (SELECT * FROM read_parquet([...])) TO file (FORMAT parquet, COMPRESSION %s), "+
			"DuckDB's defaults otherwise, one file per table", codec)
	case "arrow":
		return fmt.Sprintf("written pyarrow-style by arrow-go pqarrow: its defaults (dictionary, 1 MiB pages, statistics, Arrow schema stored) "+
			"but snappy, row groups of %d rows, data page v2, one file per table", pyarrowRowGroupRows)
	case "spark":
		return fmt.Sprintf("written Spark-style by arrow-go pqarrow with parquet-mr conventions: format version 1.0 (PLAIN_DICTIONARY "+
			"dictionary encodings), v1 data pages, snappy, 1 MiB pages and dictionary pages, row groups up to ~128 MiB "+
			"(rows from the source's uncompressed bytes per row), decimals as INT32/INT64, dates INT32 DATE, no Arrow schema, "+
			"one file per about %d rows", sparkRowsPerFile)
	case "small-files":
		return fmt.Sprintf("written by arrow-go pqarrow, snappy, lineitem in %d files and the other tables in proportion to their rows "+
			"(at least one file)", smallFiles)
	}
	return flavour
}

// writeDuckDBFlavour has DuckDB copy each table's files into one file with its
// default Parquet settings and the given compression.
func writeDuckDBFlavour(ctx context.Context, src, out, codec string, threads int) error {
	d, err := openDuckDB(ctx, threads, nil)
	if err != nil {
		return err
	}
	defer d.close()
	for _, t := range tpchTables {
		files, err := parquetFiles(filepath.Join(src, t))
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no Parquet files under %q", filepath.Join(src, t))
		}
		if err := os.MkdirAll(filepath.Join(out, t), 0o755); err != nil {
			return err
		}
		quoted := make([]string, len(files))
		for i, f := range files {
			quoted[i] = sqlString(f)
		}
		q := fmt.Sprintf("COPY (SELECT * FROM read_parquet([%s])) TO %s (FORMAT parquet, COMPRESSION %s)",
			strings.Join(quoted, ", "), sqlString(filepath.Join(out, t, t+".parquet")), codec)
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("table %s: DuckDB's COPY: %w", t, err)
		}
	}
	return nil
}

// arrowLayout is how an arrow-go flavour writes one table.
type arrowLayout struct {
	// files is how many files the table is split into, each holding an equal share
	// of the rows in their order.
	files int
	props []pq.WriterProperty
	arrow pqarrow.ArrowWriterProperties
}

// arrowLayoutFor is the layout of an arrow-go flavour for table, whose source
// files are under srcTable (the row counts and sizes of its footers decide the
// spark flavour's files and row groups and the small-files flavour's files).
func arrowLayoutFor(flavour, srcTable, table string, smallFiles int, src string) (arrowLayout, error) {
	rows, bytes, err := footerTotals(srcTable)
	if err != nil {
		return arrowLayout{}, err
	}
	snappy := pq.WithCompression(compress.Codecs.Snappy)
	switch flavour {
	case "arrow":
		return arrowLayout{files: 1,
			props: []pq.WriterProperty{snappy, pq.WithMaxRowGroupLength(pyarrowRowGroupRows), pq.WithDataPageVersion(pq.DataPageV2)},
			arrow: pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())}, nil
	case "spark":
		perRow := max(int64(1), bytes/max(rows, 1))
		return arrowLayout{files: int(max(1, (rows+sparkRowsPerFile/2)/sparkRowsPerFile)),
			props: []pq.WriterProperty{snappy, pq.WithVersion(pq.V1_0), pq.WithDataPageVersion(pq.DataPageV1),
				pq.WithDataPageSize(1 << 20), pq.WithDictionaryPageSizeLimit(1 << 20), pq.WithDictionaryDefault(true),
				pq.WithMaxRowGroupLength(max(1, sparkRowGroupBytes/perRow)), pq.WithStoreDecimalAsInteger(true),
				pq.WithCreatedBy("parquet-mr-style writer (arrow-go)")},
			arrow: pqarrow.NewArrowWriterProperties()}, nil
	case "small-files":
		lineitemRows, _, err := footerTotals(filepath.Join(src, "lineitem"))
		if err != nil {
			return arrowLayout{}, err
		}
		n := int((int64(smallFiles)*rows + lineitemRows/2) / max(lineitemRows, 1))
		return arrowLayout{files: max(1, min(n, int(max(rows, 1)))),
			props: []pq.WriterProperty{snappy},
			arrow: pqarrow.NewArrowWriterProperties()}, nil
	}
	return arrowLayout{}, fmt.Errorf("flavour %q is not written by arrow-go", flavour)
}

// footerTotals sums the rows and the uncompressed bytes of the row groups of the
// Parquet files under dir.
func footerTotals(dir string) (rows, bytes int64, err error) {
	files, err := parquetFiles(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range files {
		r, err := file.OpenParquetFile(f, false)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot open %q: %w", f, err)
		}
		md := r.MetaData()
		rows += md.NumRows
		for i := range md.NumRowGroups() {
			bytes += md.RowGroup(i).TotalByteSize()
		}
		r.Close()
	}
	return rows, bytes, nil
}

// rewriteTable reads the Parquet files under src in order and writes their rows to
// layout.files files under dst with the layout's writer settings.
func rewriteTable(ctx context.Context, src, dst string, layout arrowLayout) error {
	files, err := parquetFiles(src)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no Parquet files under %q", src)
	}
	total, _, err := footerTotals(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	sw := &splitWriter{dir: dst, total: total, files: max(1, layout.files), layout: layout}
	defer sw.abort()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copyRecords(ctx, f, sw); err != nil {
			return err
		}
	}
	return sw.finish()
}

// copyRecords hands every record of the Parquet file at path to sw.
func copyRecords(ctx context.Context, path string, sw *splitWriter) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("cannot open %q: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("cannot read %q: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("cannot read %q: %w", path, err)
	}
	defer rr.Release()
	for {
		rec, err := rr.Read()
		if errors.Is(err, io.EOF) || (err == nil && rec == nil) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot read %q: %w", path, err)
		}
		if err := sw.write(rec); err != nil {
			return err
		}
	}
}

// splitWriter writes a stream of records to a number of files, file i of n holding
// rows [total·i/n, total·(i+1)/n), each file's row groups as the layout says.
type splitWriter struct {
	dir    string
	total  int64
	files  int
	layout arrowLayout

	idx     int   // the file being written
	written int64 // rows written to it
	f       *os.File
	fw      *pqarrow.FileWriter
}

// quota is how many rows file i holds.
func (s *splitWriter) quota(i int) int64 {
	n := int64(s.files)
	return s.total*int64(i+1)/n - s.total*int64(i)/n
}

func (s *splitWriter) write(rec arrow.RecordBatch) error {
	for off := int64(0); off < rec.NumRows(); {
		for s.fw == nil && s.quota(s.idx) == 0 && s.idx < s.files-1 {
			s.idx++
		}
		if s.fw == nil {
			if err := s.open(rec.Schema()); err != nil {
				return err
			}
		}
		n := min(rec.NumRows()-off, s.quota(s.idx)-s.written)
		if s.idx == s.files-1 {
			n = rec.NumRows() - off // the last file takes whatever is left
		}
		part := rec.NewSlice(off, off+n)
		err := s.fw.WriteBuffered(part)
		part.Release()
		if err != nil {
			return fmt.Errorf("cannot write %q: %w", s.f.Name(), err)
		}
		s.written += n
		off += n
		if s.written >= s.quota(s.idx) && s.idx < s.files-1 {
			if err := s.close(); err != nil {
				return err
			}
			s.idx++
		}
	}
	return nil
}

func (s *splitWriter) open(schema *arrow.Schema) error {
	f, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("part-%05d.parquet", s.idx)))
	if err != nil {
		return err
	}
	fw, err := pqarrow.NewFileWriter(schema, f, pq.NewWriterProperties(s.layout.props...), s.layout.arrow)
	if err != nil {
		f.Close()
		return fmt.Errorf("cannot start %q: %w", f.Name(), err)
	}
	s.f, s.fw, s.written = f, fw, 0
	return nil
}

// close finishes the current file (pqarrow's Close closes the file too).
func (s *splitWriter) close() error {
	fw, name := s.fw, s.f.Name()
	s.fw, s.f = nil, nil
	if err := fw.Close(); err != nil {
		return fmt.Errorf("cannot finish %q: %w", name, err)
	}
	return nil
}

// finish closes the last file. A source without rows makes no file.
func (s *splitWriter) finish() error {
	if s.fw == nil {
		return nil
	}
	return s.close()
}

// abort closes a file left open by an error.
func (s *splitWriter) abort() {
	if s.fw != nil {
		s.fw.Close()
	}
}

// describeFooter says what one file of a data set holds: its row groups, the
// codec, physical type and encodings of a decimal column (the first column when
// the table has none) and the writer named in the footer.
func describeFooter(path string) (string, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return "", fmt.Errorf("cannot open %q: %w", path, err)
	}
	defer r.Close()
	md := r.MetaData()
	if md.NumRowGroups() == 0 {
		return fmt.Sprintf("%s: no row groups", filepath.Base(path)), nil
	}
	schema := md.Schema
	col := 0
	for i := range schema.NumColumns() {
		if schema.Column(i).LogicalType().String() != "" && strings.HasPrefix(schema.Column(i).LogicalType().String(), "Decimal") {
			col = i
			break
		}
	}
	rg := md.RowGroup(0)
	cc, err := rg.ColumnChunk(col)
	if err != nil {
		return "", err
	}
	var encs []string
	for _, e := range cc.Encodings() {
		encs = append(encs, e.String())
	}
	return fmt.Sprintf("%s: %d rows in %d row groups (the first %d rows), %s; %s %s [%s], %s; created by %q",
		filepath.Base(path), md.NumRows, md.NumRowGroups(), rg.NumRows(), cc.Compression(),
		schema.Column(col).Name(), schema.Column(col).PhysicalType(), strings.Join(encs, " "),
		dataPageKind(r.RowGroup(0), col), md.GetCreatedBy()), nil
}

// dataPageKind says whether the first data page of a column chunk is a v1 or a v2
// page (the footer does not record it; the page header does).
func dataPageKind(rg *file.RowGroupReader, col int) string {
	pr, err := rg.GetColumnPageReader(col)
	if err != nil {
		return "data pages unknown"
	}
	defer pr.Close()
	for pr.Next() {
		switch pr.Page().Type() {
		case file.PageTypeDataPage:
			return "v1 data pages"
		case file.PageTypeDataPageV2:
			return "v2 data pages"
		}
	}
	return "no data page"
}
