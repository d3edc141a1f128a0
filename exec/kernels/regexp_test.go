package kernels

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// callConst resolves name with the arguments in consts (non-nil) known as
// constants, as the binder does for literals, and evaluates it.
func callConst(t testing.TB, name string, consts []*types.Value, args ...arrow.Array) (string, error) {
	t.Helper()
	dts := make([]arrow.DataType, len(args))
	for i, a := range args {
		dts[i] = a.DataType()
	}
	f, err := ResolveConst(name, dts, consts)
	if err != nil {
		return "", err
	}
	out, err := f.Eval(args, args[0].Len())
	if err != nil {
		return "", err
	}
	if !arrow.TypeEqual(types.Unwrap(out.DataType()), f.Result) {
		t.Fatalf("%s: result type %s, declared %s", name, out.DataType(), f.Result)
	}
	return joined(out), nil
}

func sv(s string) *types.Value { v := types.StringValue(s); return &v }
func iv(i int64) *types.Value  { v := types.IntValue(i); return &v }

func TestRegexpFunctions(t *testing.T) {
	s := mk(t, types.String, "abc123", "ÄÖÜ straße", "", nil, "a.b.c")
	n := s.Len()
	cases := []struct {
		name   string
		consts []*types.Value
		args   []arrow.Array
		want   string
	}{
		{"regexp_matches", []*types.Value{nil, sv("\\d")}, []arrow.Array{s, constStr("\\d", n)}, "true,false,false,NULL,false"},
		{"regexp_matches", []*types.Value{nil, sv("STRA"), sv("i")}, []arrow.Array{s, constStr("STRA", n), constStr("i", n)}, "false,true,false,NULL,false"},
		{"regexp_matches", []*types.Value{nil, sv("."), sv("l")}, []arrow.Array{s, constStr(".", n), constStr("l", n)}, "false,false,false,NULL,true"},
		{"regexp_full_match", []*types.Value{nil, sv("[a-z]*")}, []arrow.Array{s, constStr("[a-z]*", n)}, "false,false,true,NULL,false"},
		{"regexp_replace", []*types.Value{nil, sv("[a-zß]"), nil}, []arrow.Array{s, constStr("[a-zß]", n), constStr("_", n)}, "_bc123,ÄÖÜ _traße,,NULL,_.b.c"},
		{"regexp_replace", []*types.Value{nil, sv("([a-z])"), nil, sv("g")}, []arrow.Array{s, constStr("([a-z])", n), constStr("<\\1>", n), constStr("g", n)},
			"<a><b><c>123,ÄÖÜ <s><t><r><a>ß<e>,,NULL,<a>.<b>.<c>"},
		{"regexp_extract", []*types.Value{nil, sv("(\\pL)(\\pL)"), iv(2)}, []arrow.Array{s, constStr("(\\pL)(\\pL)", n), constInt(2, n)}, "b,Ö,,NULL,"},
		{"regexp_extract_all", []*types.Value{nil, sv("\\pL+")}, []arrow.Array{s, constStr("\\pL+", n)}, "[abc],[ÄÖÜ, straße],[],NULL,[a, b, c]"},
		{"regexp_split_to_array", []*types.Value{nil, sv("[ .]")}, []arrow.Array{s, constStr("[ .]", n)}, "[abc123],[ÄÖÜ, straße],[''],NULL,[a, b, c]"},
		{"string_split", nil, []arrow.Array{s, constStr("", n)}, "[a, b, c, 1, 2, 3],[Ä, Ö, Ü, ' ', s, t, r, a, ß, e],[''],NULL,[a, ., b, ., c]"},
		{"string_split", nil, []arrow.Array{s, ConstArray(types.NullOf(types.String), n)}, "[abc123],[ÄÖÜ straße],[''],NULL,[a.b.c]"},
		{"regexp_escape", nil, []arrow.Array{s}, "abc123,ÄÖÜ\\ straße,,NULL,a\\.b\\.c"},
	}
	for _, c := range cases {
		got, err := callConst(t, c.name, c.consts, c.args...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %q\n want %q", c.name, got, c.want)
		}
		// The same call with nothing known at bind time (the pattern compiled per
		// batch) gives the same rows.
		if len(c.args) == 2 && c.name != "string_split" || c.name == "regexp_split_to_array" {
			if got2, err := callConst(t, c.name, nil, c.args...); err != nil || got2 != c.want {
				t.Errorf("%s without constants: %q, %v", c.name, got2, err)
			}
		}
	}
}

func TestRegexpPatternsByRow(t *testing.T) {
	s := mk(t, types.String, "abc", "abc", "xyz", nil, "q")
	p := mk(t, types.String, "B", "b", "y|z", "a", nil)
	if got := mustCall(t, "regexp_matches", s, p); got != "false,true,true,NULL,NULL" {
		t.Errorf("regexp_matches by row: %s", got)
	}
	if got := mustCall(t, "regexp_replace", s, p, constStr("-", s.Len())); got != "abc,a-c,x-z,NULL,NULL" {
		t.Errorf("regexp_replace by row: %s", got)
	}
	bad := mk(t, types.String, "a", "(", "b", "c", "d")
	if _, _, err := evalCall(t, "regexp_matches", s, bad); errs.CodeOf(err) != errs.Analysis {
		t.Errorf("an invalid pattern in a row: %v", err)
	}
}

func TestRegexpBindErrors(t *testing.T) {
	s := constStr("abc", 1)
	for _, c := range []struct {
		name   string
		consts []*types.Value
		args   []arrow.Array
	}{
		{"regexp_matches", []*types.Value{nil, sv("(")}, []arrow.Array{s, constStr("(", 1)}},
		{"regexp_matches", []*types.Value{nil, nil, sv("x")}, []arrow.Array{s, s, constStr("x", 1)}},
		{"regexp_matches", []*types.Value{nil, nil, sv("g")}, []arrow.Array{s, s, constStr("g", 1)}},
		{"regexp_matches", []*types.Value{nil, nil, nil}, []arrow.Array{s, s, s}},
		{"regexp_extract", []*types.Value{nil, nil, iv(10)}, []arrow.Array{s, s, constInt(10, 1)}},
		{"regexp_extract", []*types.Value{nil, nil, nil}, []arrow.Array{s, s, constInt(1, 1)}},
		{"regexp_extract_all", []*types.Value{nil, sv("(a)"), iv(2)}, []arrow.Array{s, constStr("(a)", 1), constInt(2, 1)}},
		{"regexp_replace", []*types.Value{nil, sv("a\\1"), nil}, []arrow.Array{s, constStr("a\\1", 1), s}},
	} {
		_, err := callConst(t, c.name, c.consts, c.args...)
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.Analysis {
			t.Errorf("%s %v: %v, want an ANALYSIS_ERROR", c.name, c.consts, err)
		}
	}
}

func TestRegexpOverDictionary(t *testing.T) {
	d := dict(t, "Apple", "banana", nil, "Apple", "Çava")
	n := d.Len()
	for _, c := range []struct {
		name string
		args []arrow.Array
	}{
		{"regexp_matches", []arrow.Array{d, constStr("a$", n)}},
		{"regexp_replace", []arrow.Array{d, constStr("a", n), constStr("\\0\\0", n), constStr("g", n)}},
		{"regexp_extract", []arrow.Array{d, constStr("[^a]+", n)}},
		{"regexp_extract_all", []arrow.Array{d, constStr("a.", n)}},
		{"string_split", []arrow.Array{d, constStr("a", n)}},
	} {
		consts := make([]*types.Value, len(c.args))
		for i := 1; i < len(c.args); i++ {
			v := types.ValueAt(c.args[i], 0)
			consts[i] = &v
		}
		got, err := callConst(t, c.name, consts, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, _ := callConst(t, c.name, consts, append([]arrow.Array{Decode(d)}, c.args[1:]...)...)
		if got != want {
			t.Errorf("%s over dictionary = %s, plain = %s", c.name, got, want)
		}
	}
}

func TestParseRewrite(t *testing.T) {
	for _, c := range []struct {
		r      string
		groups int
		ok     bool
	}{
		{`x`, 0, true}, {`\0`, 0, true}, {`\1`, 0, false}, {`\1\2`, 2, true}, {`\\`, 0, true},
		{`\q`, 0, false}, {`x\`, 0, false}, {`$1`, 1, true},
	} {
		if got := parseRewrite(c.r, c.groups).ok; got != c.ok {
			t.Errorf("parseRewrite(%q, %d).ok = %v", c.r, c.groups, got)
		}
	}
}
