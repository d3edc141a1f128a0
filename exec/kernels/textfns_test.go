package kernels

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

func TestTextFunctions(t *testing.T) {
	s := mk(t, types.String, "Hello", "ÄÖÜ straße", "", nil, "a b")
	n := s.Len()
	nullStr := ConstArray(types.NullOf(types.String), n)
	cases := []struct {
		name string
		args []arrow.Array
		want string
	}{
		{"concat_ws", []arrow.Array{constStr("-", n), s, nullStr, constInt(1, n)}, "Hello-1,ÄÖÜ straße-1,-1,1,a b-1"},
		{"concat_ws", []arrow.Array{nullStr, s}, "NULL,NULL,NULL,NULL,NULL"},
		{"repeat", []arrow.Array{s, constInt(2, n)}, "HelloHello,ÄÖÜ straßeÄÖÜ straße,,NULL,a ba b"},
		{"ascii", []arrow.Array{s}, "72,196,0,NULL,97"},
		{"unicode", []arrow.Array{s}, "72,196,-1,NULL,97"},
		{"translate", []arrow.Array{s, constStr("lßÖ", n), constStr("L_", n)}, "HeLLo,ÄÜ stra_e,,NULL,a b"},
		{"strlen", []arrow.Array{s}, "5,14,0,NULL,3"},
		{"bit_length", []arrow.Array{s}, "40,112,0,NULL,24"},
		{"hex", []arrow.Array{s}, "48656C6C6F,C384C396C39C2073747261C39F65,,NULL,612062"},
		{"url_encode", []arrow.Array{s}, "Hello,%C3%84%C3%96%C3%9C%20stra%C3%9Fe,,NULL,a%20b"},
		{"printf", []arrow.Array{constStr("[%6s|%-3d]", n), s, constInt(7, n)}, "[ Hello|7  ],[ÄÖÜ straße|7  ],[      |7  ],NULL,[   a b|7  ]"},
		{"format", []arrow.Array{constStr("{:>4}{}", n), s, constStr("!", n)}, "Hello!,ÄÖÜ straße!,    !,NULL, a b!"},
	}
	for _, c := range cases {
		if got := mustCall(t, c.name, c.args...); got != c.want {
			t.Errorf("%s: %q\n want %q", c.name, got, c.want)
		}
	}
}

func TestTextFunctionsOverDictionary(t *testing.T) {
	d := dict(t, "Apple", "banana", nil, "Apple", "Çava")
	n := d.Len()
	for _, c := range []struct {
		name string
		args []arrow.Array
	}{
		{"repeat", []arrow.Array{d, constInt(2, n)}},
		{"ascii", []arrow.Array{d}},
		{"hex", []arrow.Array{d}},
		{"md5", []arrow.Array{d}},
		{"translate", []arrow.Array{d, constStr("aÇ", n), constStr("xc", n)}},
		{"concat_ws", []arrow.Array{constStr(",", n), d, d}},
		{"printf", []arrow.Array{constStr("%s!", n), d}},
		{"strlen", []arrow.Array{d}},
	} {
		got := mustCall(t, c.name, c.args...)
		plain := make([]arrow.Array, len(c.args))
		for i, a := range c.args {
			plain[i] = Decode(a)
		}
		if want := mustCall(t, c.name, plain...); got != want {
			t.Errorf("%s over dictionary = %s, plain = %s", c.name, got, want)
		}
	}
}

func TestFormatErrors(t *testing.T) {
	one := constInt(1, 1)
	for _, c := range []struct {
		name string
		args []arrow.Array
	}{
		{"printf", []arrow.Array{constStr("%s", 1), one}},
		{"printf", []arrow.Array{constStr("%d", 1), constStr("x", 1)}},
		{"printf", []arrow.Array{constStr("%d %d", 1), one}},
		{"printf", []arrow.Array{constStr("%", 1), one}},
		{"format", []arrow.Array{constStr("{} {}", 1), one}},
		{"format", []arrow.Array{constStr("{0} {}", 1), one}},
		{"format", []arrow.Array{constStr("{", 1), one}},
		{"format", []arrow.Array{constStr("{:q}", 1), one}},
		{"printf", []arrow.Array{constStr("%2000000000d", 1), one}},
		{"format", []arrow.Array{constStr("{:>99999999}", 1), one}},
		{"chr", []arrow.Array{constInt(-1, 1)}},
		{"to_base", []arrow.Array{one, constInt(40, 1)}},
		{"unhex", []arrow.Array{constStr("zz", 1)}},
		{"from_base64", []arrow.Array{constStr("a", 1)}},
	} {
		if _, _, err := evalCall(t, c.name, c.args...); errs.CodeOf(err) != errs.Analysis {
			t.Errorf("%s(%s): %v, want an ANALYSIS_ERROR", c.name, joined(c.args[0]), err)
		}
	}
}

func TestFormatNumbers(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{3, "3.0"}, {2.5, "2.5"}, {1e15, "1000000000000000.0"}, {1e16, "1e+16"}, {1e-5, "1e-05"}, {0.0001, "0.0001"}, {1e100, "1e+100"},
	} {
		if got := shortestFloat(c.f); got != c.want {
			t.Errorf("shortestFloat(%g) = %s, want %s", c.f, got, c.want)
		}
	}
	if got := groupThousands("1234567"); got != "1,234,567" {
		t.Errorf("groupThousands: %s", got)
	}
}
