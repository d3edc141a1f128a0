package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/text/width"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/jsontext"
	"github.com/loredb/lore/types"
)

// Formats are the output formats WriteResult accepts, the default first.
var Formats = []string{"table", "csv", "json", "ndjson", "markdown"}

// validFormat reports whether name is one of Formats.
func validFormat(name string) bool { return slices.Contains(Formats, name) }

// WriteResult renders res to w in format (one of Formats):
//
//   - table: a boxed, aligned table with the column names and lower-case type
//     names as a two-line header; numbers right-aligned; NULL as NULL.
//   - csv: a header line, then RFC 4180 rows; NULL as an empty field.
//   - json: one line {"columns":[{"name","type"}],"rows":[[…]],"record":{…}}; numbers
//     as JSON numbers (decimals in their exact text), NaN and infinities as the
//     strings "nan", "inf", "-inf", temporal values as their text, NULL as null.
//   - ndjson: one JSON object per row, keys in column order; no record.
//   - markdown: a pipe table, numeric columns right-aligned, pipes escaped.
//
// A result without columns (a statement that returns nothing) renders as nothing
// in every format but json.
func WriteResult(w io.Writer, format string, res *lore.Result) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "table":
		err = writeTable(bw, res)
	case "csv":
		err = writeCSV(bw, res)
	case "json":
		err = writeJSON(bw, res)
	case "ndjson":
		err = writeNDJSON(bw, res)
	case "markdown":
		err = writeMarkdown(bw, res)
	default:
		return errs.New(errs.Analysis, "unknown format %q (want %s)", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// fields are the result's columns; a nil schema has none.
func fields(res *lore.Result) []arrow.Field {
	if res == nil || res.Schema == nil {
		return nil
	}
	return res.Schema.Fields()
}

// eachRow calls fn with the boxed values of every row, in order. Output is not a hot
// path: rows are boxed one at a time.
func eachRow(res *lore.Result, fn func(row []types.Value) error) error {
	ncol := len(fields(res))
	if ncol == 0 {
		return nil
	}
	row := make([]types.Value, ncol)
	for _, b := range res.Batches {
		if int(b.NumCols()) != ncol {
			return errs.New(errs.Internal, "result batch has %d columns, schema has %d", b.NumCols(), ncol)
		}
		for i := 0; i < int(b.NumRows()); i++ {
			for c := range row {
				row[c] = types.ValueAt(b.Column(c), i)
			}
			if err := fn(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// isNumeric reports whether a column's values are right-aligned.
func isNumeric(dt arrow.DataType) bool { return types.IsNumeric(types.Unwrap(dt)) }

// --- table ---

// displayWidth is the number of terminal cells s occupies: East Asian wide runes
// take two, combining marks none.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		case isWide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

func isWide(r rune) bool {
	k := width.LookupRune(r).Kind()
	return k == width.EastAsianWide || k == width.EastAsianFullwidth
}

// escapeControls makes a value printable on one line: control characters become
// their backslash escapes so that a newline cannot break the table's grid.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func pad(b *bufio.Writer, n int) {
	for range n {
		b.WriteByte(' ')
	}
}

func rule(b *bufio.Writer, widths []int, left, mid, right string) {
	b.WriteString(left)
	for i, w := range widths {
		if i > 0 {
			b.WriteString(mid)
		}
		b.WriteString(strings.Repeat("─", w+2))
	}
	b.WriteString(right)
	b.WriteByte('\n')
}

func writeTable(b *bufio.Writer, res *lore.Result) error {
	fs := fields(res)
	if len(fs) == 0 {
		return nil
	}
	names := make([]string, len(fs))
	typeNames := make([]string, len(fs))
	right := make([]bool, len(fs))
	widths := make([]int, len(fs))
	for i, f := range fs {
		names[i] = escapeControls(f.Name)
		typeNames[i] = strings.ToLower(types.Name(f.Type))
		right[i] = isNumeric(f.Type)
		widths[i] = max(displayWidth(names[i]), displayWidth(typeNames[i]))
	}
	var cells [][]string
	err := eachRow(res, func(row []types.Value) error {
		line := make([]string, len(row))
		for c, v := range row {
			line[c] = escapeControls(v.String())
			widths[c] = max(widths[c], displayWidth(line[c]))
		}
		cells = append(cells, line)
		return nil
	})
	if err != nil {
		return err
	}

	centered := func(vals []string) {
		b.WriteString("│")
		for i, v := range vals {
			space := widths[i] - displayWidth(v)
			pad(b, 1+space/2)
			b.WriteString(v)
			pad(b, 1+space-space/2)
			b.WriteString("│")
		}
		b.WriteByte('\n')
	}
	rule(b, widths, "┌", "┬", "┐")
	centered(names)
	centered(typeNames)
	if len(cells) > 0 {
		rule(b, widths, "├", "┼", "┤")
	}
	for _, line := range cells {
		b.WriteString("│")
		for i, v := range line {
			space := widths[i] - displayWidth(v)
			b.WriteByte(' ')
			if right[i] {
				pad(b, space)
				b.WriteString(v)
			} else {
				b.WriteString(v)
				pad(b, space)
			}
			b.WriteString(" │")
		}
		b.WriteByte('\n')
	}
	rule(b, widths, "└", "┴", "┘")
	return nil
}

// --- csv ---

func writeCSV(b *bufio.Writer, res *lore.Result) error {
	fs := fields(res)
	if len(fs) == 0 {
		return nil
	}
	cw := csv.NewWriter(b)
	rec := make([]string, len(fs))
	for i, f := range fs {
		rec[i] = f.Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	err := eachRow(res, func(row []types.Value) error {
		for c, v := range row {
			if v.Null {
				rec[c] = ""
			} else {
				rec[c] = v.String()
			}
		}
		return cw.Write(rec)
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// --- json and ndjson ---

// appendJSONValue appends v in the json format's value encoding.
func appendJSONValue(dst []byte, v types.Value) []byte {
	if v.Null {
		return append(dst, "null"...)
	}
	dt := types.Unwrap(v.Type)
	switch {
	case dt.ID() == arrow.BOOL:
		if v.Bool() {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case types.IsFloat(dt):
		if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
			return jsontext.AppendString(dst, v.String())
		}
		return append(dst, v.String()...)
	case types.IsInteger(dt) || types.IsDecimal(dt):
		// Exact text: integers and decimals never pass through a float64.
		return append(dst, v.String()...)
	}
	return jsontext.AppendString(dst, v.String())
}

func writeJSON(b *bufio.Writer, res *lore.Result) error {
	out := []byte(`{"columns":[`)
	for i, f := range fields(res) {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"name":`...)
		out = jsontext.AppendString(out, f.Name)
		out = append(out, `,"type":`...)
		out = jsontext.AppendString(out, types.Name(f.Type))
		out = append(out, '}')
	}
	out = append(out, `],"rows":[`...)
	first := true
	err := eachRow(res, func(row []types.Value) error {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, '[')
		for c, v := range row {
			if c > 0 {
				out = append(out, ',')
			}
			out = appendJSONValue(out, v)
		}
		out = append(out, ']')
		// Flush long results as they are built rather than holding them whole.
		if len(out) > 64<<10 {
			if _, err := b.Write(out); err != nil {
				return err
			}
			out = out[:0]
		}
		return nil
	})
	if err != nil {
		return err
	}
	out = append(out, `],"record":`...)
	var rec *lore.Record
	if res != nil {
		rec = res.Record
	}
	recJSON, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("cannot encode the query record: %w", err)
	}
	out = append(out, recJSON...)
	out = append(out, "}\n"...)
	_, err = b.Write(out)
	return err
}

func writeNDJSON(b *bufio.Writer, res *lore.Result) error {
	fs := fields(res)
	keys := make([][]byte, len(fs))
	for i, f := range fs {
		keys[i] = append(jsontext.AppendString(nil, f.Name), ':')
	}
	var out []byte
	return eachRow(res, func(row []types.Value) error {
		out = append(out[:0], '{')
		for c, v := range row {
			if c > 0 {
				out = append(out, ',')
			}
			out = append(out, keys[c]...)
			out = appendJSONValue(out, v)
		}
		out = append(out, "}\n"...)
		_, err := b.Write(out)
		return err
	})
}

// --- markdown ---

// markdownCell escapes a value for a pipe-table cell: pipes and backslashes are
// escaped and line breaks become <br> so the row stays on one line.
func markdownCell(s string) string {
	if !strings.ContainsAny(s, "|\\\n\r") {
		return s
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r\n", "<br>")
	s = strings.ReplaceAll(s, "\n", "<br>")
	return strings.ReplaceAll(s, "\r", "<br>")
}

func writeMarkdown(b *bufio.Writer, res *lore.Result) error {
	fs := fields(res)
	if len(fs) == 0 {
		return nil
	}
	b.WriteString("|")
	for _, f := range fs {
		b.WriteString(" " + markdownCell(f.Name) + " |")
	}
	b.WriteString("\n|")
	for _, f := range fs {
		if isNumeric(f.Type) {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteByte('\n')
	return eachRow(res, func(row []types.Value) error {
		b.WriteString("|")
		for _, v := range row {
			b.WriteString(" " + markdownCell(v.String()) + " |")
		}
		return b.WriteByte('\n')
	})
}
