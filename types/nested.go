package types

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// formatNested renders row i of a list, struct or map array in DuckDB's text form:
// [1, 2, NULL], {'x': 1, 'y': one}, {a=1, b=2}. Strings inside are written bare
// unless they would read ambiguously (empty, "null", surrounding spaces, or one of
// the delimiters), when they are quoted with ' and their quotes escaped. ok is false
// for any other array.
func formatNested(arr arrow.Array, i int) (string, bool) {
	var sb strings.Builder
	switch a := arr.(type) {
	case *array.Map:
		writeMap(&sb, a, i)
	case *array.List, *array.LargeList, *array.FixedSizeList:
		lst := a.(array.ListLike)
		start, end := lst.ValueOffsets(i)
		sb.WriteByte('[')
		for k := start; k < end; k++ {
			if k > start {
				sb.WriteString(", ")
			}
			writeElement(&sb, lst.ListValues(), int(k))
		}
		sb.WriteByte(']')
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		sb.WriteByte('{')
		for f := range st.NumFields() {
			if f > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(quoteNested(st.Field(f).Name, true))
			sb.WriteString(": ")
			writeElement(&sb, a.Field(f), i)
		}
		sb.WriteByte('}')
	default:
		return "", false
	}
	return sb.String(), true
}

func writeMap(sb *strings.Builder, m *array.Map, i int) {
	start, end := m.ValueOffsets(i)
	sb.WriteByte('{')
	for k := start; k < end; k++ {
		if k > start {
			sb.WriteString(", ")
		}
		writeElement(sb, m.Keys(), int(k))
		sb.WriteByte('=')
		writeElement(sb, m.Items(), int(k))
	}
	sb.WriteByte('}')
}

// writeElement writes one value nested in a list, struct or map.
func writeElement(sb *strings.Builder, arr arrow.Array, i int) {
	if arr.IsNull(i) {
		sb.WriteString("NULL")
		return
	}
	if s, ok := formatNested(arr, i); ok {
		sb.WriteString(s)
		return
	}
	v := ValueAt(arr, i)
	if IsString(Unwrap(v.Type)) {
		sb.WriteString(quoteNested(v.S, false))
		return
	}
	sb.WriteString(v.String())
}

// quoteNested quotes a string nested in a composite value when it must be (always,
// for a struct's field names).
func quoteNested(s string, always bool) string {
	if !always && !needsQuotes(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

func needsQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "null") {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	return strings.ContainsAny(s, `,[]{}():='"`)
}
