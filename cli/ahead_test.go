package cli

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/loredb/lore/internal/ahead"
)

// Package ahead reads lore sql's command line before package flag does: it must
// know every flag, and whether it takes a value, or it would read a flag's value
// as the next flag.
func TestAheadKnowsSQLFlags(t *testing.T) {
	fs, _ := newSQLFlags(&env{stdout: io.Discard, stderr: io.Discard})
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		b, isBool := f.Value.(interface{ IsBoolFlag() bool })
		wantValue := !isBool || !b.IsBoolFlag()
		if known, value := ahead.SQLFlag(f.Name); !known || value != wantValue {
			t.Errorf("ahead.SQLFlag(%q) = known %v, takes a value %v; lore sql's flag takes a value: %v", f.Name, known, value, wantValue)
		}
	})
	if n < 9 {
		t.Fatalf("lore sql has %d flags; the test expects at least 9", n)
	}
	if known, _ := ahead.SQLFlag("no-such-flag"); known {
		t.Error("ahead knows a flag lore sql does not have")
	}
}

// What ahead reads from a command line is what package flag parses from it.
func TestAheadReadsSQLArgs(t *testing.T) {
	for _, line := range []string{
		"sql",
		"sql -c SELECT_1",
		"sql --home /tmp/h -c q",
		"sql -home=/tmp/h --c=q",
		"sql --timer --home h1 --home h2 -c a -c b",
		"sql --set k=v --set --home=x --format csv -c q",
		"sql --format -c --home h",
		"sql --memory-limit 1GiB -f script.sql --home h",
		"sql -c q -- --home h",
		"sql -c q rest --home h",
		"sql --home h -",
		"sql --timer=false --home h",
	} {
		args := strings.Fields(line)
		home, text, ok := ahead.SQLArgs(args)
		if !ok {
			t.Errorf("%q: ahead is not sure of it", line)
			continue
		}
		fs, f := newSQLFlags(&env{stdout: io.Discard, stderr: io.Discard})
		if err := fs.Parse(args[1:]); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if home != *f.home || text != *f.command {
			t.Errorf("%q: ahead reads home %q, text %q; package flag parses %q, %q", line, home, text, *f.home, *f.command)
		}
	}
	for _, line := range []string{
		"",
		"version",
		"serve --home h",
		"sql --server http://x -c q",
		"sql --home",
		"sql --nosuch --home h",
		"sql ---home h",
		"sql -h",
	} {
		if _, _, ok := ahead.SQLArgs(strings.Fields(line)); ok {
			t.Errorf("%q: ahead would open a catalog for it", line)
		}
	}
}
