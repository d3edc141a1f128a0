package lore

import (
	"errors"
	"strings"
	"testing"

	"github.com/loredb/lore/errs"
)

// TestBeamFailure: a failed lore-beam run is the error its last report line names;
// a line of an unknown code, or none, is INTERNAL with the output's end.
func TestBeamFailure(t *testing.T) {
	exit := errors.New("exit status 1")
	for _, c := range []struct {
		out  string
		code errs.Code
		msg  string
	}{
		{"log line\nlore-beam: SOURCE_CHANGED: \"a.parquet\" changed\n", errs.SourceChanged, "\"a.parquet\" changed"},
		{"lore-beam: CORRUPT_SOURCE: first\nmore logs\nlore-beam: SOURCE_UNAVAILABLE: second", errs.SourceUnavailable, "second"},
		{"lore-beam: NOT_A_CODE: what\n", errs.Internal, "NOT_A_CODE"},
		{"panic: boom\n", errs.Internal, "panic: boom"},
		{"", errs.Internal, "exit status 1"},
	} {
		err := beamFailure([]byte(c.out), exit)
		if errs.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v (%s), want %s with %q", c.out, err, errs.CodeOf(err), c.code, c.msg)
		}
	}
}
