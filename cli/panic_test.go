package cli

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/exec"
)

// A statement that panics in the engine, or while the shell writes its result, prints
// an INTERNAL error and the shell reads the next statement.
func TestShellGoesOnAfterAPanic(t *testing.T) {
	eng, err := lore.Open(context.Background(), lore.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var roots atomic.Int64
	exec.SetFailAt(func(point string) {
		if point == exec.PointRoot && roots.Add(1) == 1 {
			panic("injected")
		}
	})
	defer exec.SetFailAt(nil)
	var out, errOut bytes.Buffer
	s := &shellState{sqlRun: &sqlRun{q: eng, format: "csv", stdout: &out, stderr: &errOut, timerOut: &out}}
	s.loop(context.Background(), &lines{input: []string{"SELECT 1 AS a;", "SELECT 2 AS b;"}})
	if e := errOut.String(); !strings.Contains(e, "INTERNAL") || !strings.Contains(e, "injected") {
		t.Errorf("stderr %q does not report the panic as INTERNAL", e)
	}
	if o := out.String(); o != "b\n2\n" {
		t.Errorf("stdout %q: the statement after the panic did not run", o)
	}

	// A panic outside the engine's own recovery (here, the querier itself).
	out.Reset()
	errOut.Reset()
	s = &shellState{sqlRun: &sqlRun{q: panicky{}, format: "csv", stdout: &out, stderr: &errOut, timerOut: &out}}
	s.loop(context.Background(), &lines{input: []string{"SELECT 1;", "SELECT 2;"}})
	if e := errOut.String(); strings.Count(e, "INTERNAL") != 2 {
		t.Errorf("stderr %q: want both statements to fail with INTERNAL", e)
	}
}

// panicky panics on every statement.
type panicky struct{}

func (panicky) Query(context.Context, string, map[string]string) (*lore.Result, error) {
	var r *lore.Result
	r.Record.ID = "never"
	return r, nil
}
