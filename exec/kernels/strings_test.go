package kernels

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

func TestStringFunctions(t *testing.T) {
	s := mk(t, types.String, "Hello", "ÄÖÜ straße", "", nil, "  pad  ")
	n := s.Len()
	cases := []struct {
		name string
		args []arrow.Array
		want string
	}{
		{"lower", []arrow.Array{s}, "hello,äöü straße,,NULL,  pad  "},
		{"upper", []arrow.Array{s}, "HELLO,ÄÖÜ STRAßE,,NULL,  PAD  "},
		{"length", []arrow.Array{s}, "5,10,0,NULL,7"},
		{"reverse", []arrow.Array{s}, "olleH,eßarts ÜÖÄ,,NULL,  dap  "},
		{"substr", []arrow.Array{s, constInt(2, n), constInt(3, n)}, "ell,ÖÜ ,,NULL, pa"},
		{"substring", []arrow.Array{s, constInt(-3, n)}, "llo,aße,,NULL,d  "},
		{"substr", []arrow.Array{s, constInt(0, n), constInt(2, n)}, "H,Ä,,NULL, "},
		{"substr", []arrow.Array{s, constInt(3, n), constInt(-2, n)}, "He,ÄÖ,,NULL,  "},
		{"substr", []arrow.Array{s, constInt(100, n)}, ",,,NULL,"},
		{"trim", []arrow.Array{s}, "Hello,ÄÖÜ straße,,NULL,pad"},
		{"ltrim", []arrow.Array{s}, "Hello,ÄÖÜ straße,,NULL,pad  "},
		{"rtrim", []arrow.Array{s}, "Hello,ÄÖÜ straße,,NULL,  pad"},
		{"trim", []arrow.Array{s, constStr("Hoe ", n)}, "ll,ÄÖÜ straß,,NULL,pad"},
		{"replace", []arrow.Array{s, constStr("l", n), constStr("L", n)}, "HeLLo,ÄÖÜ straße,,NULL,  pad  "},
		{"starts_with", []arrow.Array{s, constStr("He", n)}, "true,false,false,NULL,false"},
		{"contains", []arrow.Array{s, constStr("ra", n)}, "false,true,false,NULL,false"},
		{"strpos", []arrow.Array{s, constStr("ß", n)}, "0,9,0,NULL,0"},
		{"left", []arrow.Array{s, constInt(2, n)}, "He,ÄÖ,,NULL,  "},
		{"left", []arrow.Array{s, constInt(-2, n)}, "Hel,ÄÖÜ stra,,NULL,  pad"},
		{"right", []arrow.Array{s, constInt(3, n)}, "llo,aße,,NULL,d  "},
		{"right", []arrow.Array{s, constInt(-8, n)}, ",ße,,NULL,"},
		{"lpad", []arrow.Array{s, constInt(7, n), constStr("*", n)}, "**Hello,ÄÖÜ str,*******,NULL,  pad  "},
		{"rpad", []arrow.Array{s, constInt(6, n), constStr("xy", n)}, "Hellox,ÄÖÜ st,xyxyxy,NULL,  pad "},
		{"split_part", []arrow.Array{s, constStr("l", n), constInt(2, n)}, ",,,NULL,"},
		{"split_part", []arrow.Array{s, constStr("l", n), constInt(-1, n)}, "o,ÄÖÜ straße,,NULL,  pad  "},
		{"concat", []arrow.Array{s, ConstArray(types.NullOf(types.String), n), constStr("!", n)}, "Hello!,ÄÖÜ straße!,!,!,  pad  !"},
		{"||", []arrow.Array{s, constStr("!", n)}, "Hello!,ÄÖÜ straße!,!,NULL,  pad  !"},
		{"concat", []arrow.Array{s, constInt(1, n)}, "Hello1,ÄÖÜ straße1,1,1,  pad  1"},
	}
	for _, c := range cases {
		if got := mustCall(t, c.name, c.args...); got != c.want {
			t.Errorf("%s: %q\n want %q", c.name, got, c.want)
		}
	}
}

func TestSubstringSemantics(t *testing.T) {
	// DuckDB's rules for out-of-range and non-positive starts.
	cases := []struct {
		s          string
		start, len int64
		want       string
	}{
		{"hello", 1, 2, "he"}, {"hello", 0, 3, "he"}, {"hello", 0, 1, ""}, {"hello", -2, 2, "lo"},
		{"hello", -10, 3, "hel"}, {"hello", 4, 10, "lo"}, {"hello", 6, 1, ""}, {"hello", 2, 0, ""},
		{"hello", 5, -2, "ll"}, {"héllo", 2, 2, "él"}, {"", 1, 1, ""},
	}
	for _, c := range cases {
		if got := substring(c.s, c.start, c.len); got != c.want {
			t.Errorf("substring(%q, %d, %d) = %q, want %q", c.s, c.start, c.len, got, c.want)
		}
	}
}

func TestStringFunctionsOverDictionary(t *testing.T) {
	d := dict(t, "Apple", "banana", nil, "Apple", "Çava")
	n := d.Len()
	for _, c := range []struct {
		name string
		args []arrow.Array
	}{
		{"lower", []arrow.Array{d}},
		{"upper", []arrow.Array{d}},
		{"length", []arrow.Array{d}},
		{"substr", []arrow.Array{d, constInt(2, n), constInt(2, n)}},
		{"like", []arrow.Array{d, constStr("%a%", n)}},
		{"ilike", []arrow.Array{d, constStr("ç%", n)}},
		{"concat", []arrow.Array{d, constStr("!", n)}},
		{"starts_with", []arrow.Array{d, constStr("A", n)}},
		{"||", []arrow.Array{d, mk(t, types.String, "1", "2", "3", "4", "5")}}, // non-constant: decoded
	} {
		plainArgs := append([]arrow.Array{Decode(d)}, c.args[1:]...)
		got := mustCall(t, c.name, c.args...)
		want := mustCall(t, c.name, plainArgs...)
		if got != want {
			t.Errorf("%s over dictionary = %s, plain = %s", c.name, got, want)
		}
	}
	// lower() of a dictionary stays a dictionary.
	out, _, err := evalCall(t, "lower", d)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.DataType().(*arrow.DictionaryType); !ok {
		t.Errorf("lower(dictionary) returned %s", out.DataType())
	}
}

func TestLike(t *testing.T) {
	cases := []struct {
		s, p string
		want bool
	}{
		{"hello", "hello", true}, {"hello", "hell", false}, {"hello", "h%", true}, {"hello", "%o", true},
		{"hello", "%ll%", true}, {"hello", "%x%", false}, {"hello", "h_llo", true}, {"hello", "h_lo", false},
		{"hello", "_____", true}, {"hello", "______", false}, {"hello", "%", true}, {"", "%", true},
		{"", "_", false}, {"", "", true}, {"hello", "h%l%o", true}, {"hello", "h%l%x", false},
		{"hello", "%l_o", true}, {"hello", "%%", true}, {"abcabc", "%abc", true}, {"abcab", "a%b%c%", true}, {"acb", "a%b%c%", false},
		{"100%", "100\\%", true}, {"1000", "100\\%", false}, {"a_b", "a\\_b", true}, {"axb", "a\\_b", false},
		{"back\\slash", "back\\\\slash", true}, {"naïve", "na_ve", true}, {"naïve", "%ï%", true},
		{"日本語", "日_語", true}, {"日本語", "__", false}, {"aaa", "a%a%a", true}, {"aa", "a%a%a", false},
		{"mississippi", "%iss%pi", true}, {"mississippi", "m%ss_ss%", true}, {"ab", "a%_b", false}, {"axb", "a%_b", true},
	}
	n := len(cases)
	svals, pvals := make([]any, n), make([]any, n)
	want := make([]string, n)
	for i, c := range cases {
		svals[i], pvals[i] = c.s, c.p
		want[i] = types.BoolValue(c.want).String()
		// Each pattern also as a constant column.
		got := mustCall(t, "like", mk(t, types.String, c.s), mk(t, types.String, c.p))
		if got != want[i] {
			t.Errorf("%q LIKE %q = %s, want %v", c.s, c.p, got, c.want)
		}
		neg := mustCall(t, "not_like", mk(t, types.String, c.s), mk(t, types.String, c.p))
		if neg != types.BoolValue(!c.want).String() {
			t.Errorf("%q NOT LIKE %q = %s", c.s, c.p, neg)
		}
	}
	// Row-varying patterns in one batch.
	got := mustCall(t, "like", mk(t, types.String, svals...), mk(t, types.String, pvals...))
	if got != joined(mk(t, types.String, toAny(want)...)) {
		t.Errorf("row-varying patterns: %s", got)
	}
	if got := mustCall(t, "ilike", mk(t, types.String, "HeLLo", "ÉCOLE", nil), constStr("%ll%", 3)); got != "true,false,NULL" {
		t.Errorf("ILIKE: %s", got)
	}
	if got := mustCall(t, "ilike", mk(t, types.String, "ÉCOLE"), constStr("é%", 1)); got != "true" {
		t.Errorf("ILIKE unicode: %s", got)
	}
	if got := mustCall(t, "not_ilike", mk(t, types.String, "ABC"), constStr("a%", 1)); got != "false" {
		t.Errorf("NOT ILIKE: %s", got)
	}
	wantErr(t, "like", "escape", mk(t, types.String, "a"), mk(t, types.String, "a\\"))
	if got := mustCall(t, "regexp_matches", mk(t, types.String, "abc123", "xyz"), constStr("[0-9]+", 2)); got != "true,false" {
		t.Errorf("regexp_matches: %s", got)
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func TestPadErrors(t *testing.T) {
	wantErr(t, "lpad", "padding", mk(t, types.String, "a"), constInt(3, 1), constStr("", 1))
}

// TestSizedStringResults: lpad, rpad and replace tell the caller their result's size
// before making it, so a caller over its budget stops them first, and a result no
// array can hold fails with RESOURCE_EXHAUSTED instead of being made.
func TestSizedStringResults(t *testing.T) {
	vals := make([]any, 200)
	for i := range vals {
		vals[i] = "ab"
	}
	s := mk(t, types.String, vals...)
	for _, c := range []struct {
		name string
		args []arrow.Array
		want int64 // result bytes, offsets included
	}{
		{"lpad", []arrow.Array{s, constInt(10, 200), constStr("xy", 200)}, 200*(2+8) + 4*201},
		{"rpad", []arrow.Array{s, constInt(1000, 200), constStr("é", 200)}, 200*(2+998*2) + 4*201},
		{"replace", []arrow.Array{s, constStr("b", 200), constStr("12345", 200)}, 200*6 + 4*201},
	} {
		f, err := Resolve(c.name, []arrow.DataType{c.args[0].DataType(), c.args[1].DataType(), c.args[2].DataType()})
		if err != nil {
			t.Fatal(err)
		}
		if f.EvalSized == nil {
			t.Fatalf("%s has no sized evaluation", c.name)
		}
		var told int64
		out, err := f.EvalSized(c.args, 200, func(n int64) error { told = n; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if told != c.want {
			t.Errorf("%s reserved %d bytes, want %d", c.name, told, c.want)
		}
		if got := int64(len(out.(*array.String).ValueBytes())) + 4*201; got > told {
			t.Errorf("%s made %d bytes after reserving %d", c.name, got, told)
		}
		refuse := errs.New(errs.ResourceExhausted, "no room")
		if _, err := f.EvalSized(c.args, 200, func(int64) error { return refuse }); err != refuse {
			t.Errorf("%s: a refused reservation gave %v", c.name, err)
		}
	}
	// 200 rows padded to 2^24 characters are 3.2 GB: more than one array can hold.
	f, err := Resolve("lpad", []arrow.DataType{types.String, types.Int64, types.String})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Eval([]arrow.Array{s, constInt(1<<24, 200), constStr("x", 200)}, 200)
	if !errors.Is(err, errs.ErrResourceExhausted) {
		t.Fatalf("lpad to 2^24 characters over 200 rows: %v, want RESOURCE_EXHAUSTED", err)
	}
}

// TestDecodeStringsExactly: a dictionary of strings expands to the same array as a
// gather, with data buffers of exactly the bytes the rows take.
func TestDecodeStringsExactly(t *testing.T) {
	values := mk(t, types.String, "a", nil, strings.Repeat("x", 1000))
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int32{2, 0, 1, 2, 2}, nil)
	b.AppendNull()
	indices := b.NewArray()
	d := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: types.String}, indices, values)
	got := Decode(d).(*array.String)
	want := []any{strings.Repeat("x", 1000), "a", nil, strings.Repeat("x", 1000), strings.Repeat("x", 1000), nil}
	if !array.Equal(got, mk(t, types.String, want...)) {
		t.Fatalf("decoded %v", got)
	}
	if c := got.Data().Buffers()[2].Cap(); c != 3001 {
		t.Fatalf("data buffer of %d bytes, want 3001", c)
	}
}
