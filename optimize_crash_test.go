package lore_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/internal/publish"
)

// TestOptimizeCrashChild is the child of TestOptimizeCrash: with LORE_CRASH_HOME set
// it runs OPTIMIZE on that home's table ev and SIGKILLs itself at the LORE_CRASH_AT-th
// time the step LORE_CRASH_STEP is reached ("write": after a batch is written).
func TestOptimizeCrashChild(t *testing.T) {
	home := os.Getenv("LORE_CRASH_HOME")
	if home == "" {
		t.Skip("run by TestOptimizeCrash")
	}
	step := os.Getenv("LORE_CRASH_STEP")
	at, _ := strconv.Atoi(os.Getenv("LORE_CRASH_AT"))
	seen := 0
	kill := func(s string) {
		if s != step {
			return
		}
		if seen++; seen == at {
			// A real crash: no deferred function, no flush, no cleanup runs.
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
	}
	publish.FailPoint = kill
	lore.SetOptimizeHook(func() { kill("write") })
	e, err := lore.Open(context.Background(), lore.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Query(context.Background(), "OPTIMIZE ev WITH (row_group_rows = 3000, file_bytes = 100000)", nil); err != nil {
		t.Fatal(err)
	}
	// The step was not reached: the parent sees a clean exit.
}

func TestOptimizeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary a dozen times")
	}
	// 100,000 rows: OPTIMIZE writes them in five batches of a page's rows.
	base := events(t, 100_000, 5, 4_000, false)
	steps := []struct {
		step string
		at   int
	}{
		{"write", 1}, {"write", 2 + rand.IntN(4)}, {"staged", 1}, {"manifest", 1},
		{"renamed", 1}, {"renamed", 2}, {"deleted", 1}, {"deleted", 4}, {"cleanup", 1},
	}
	for _, c := range steps {
		t.Run(c.step+"-"+strconv.Itoa(c.at), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "events")
			copyDir(t, base, dir)
			home := t.TempDir()
			e := open(t, lore.Options{Home: home})
			query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
			want := fingerprint(t, e, "ev")
			e.Close()

			cmd := exec.Command(os.Args[0], "-test.run", "^TestOptimizeCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "LORE_CRASH_HOME="+home, "LORE_CRASH_STEP="+c.step, "LORE_CRASH_AT="+strconv.Itoa(c.at))
			out, err := cmd.CombinedOutput()
			ee, ok := err.(*exec.ExitError)
			if !ok || !ee.Sys().(syscall.WaitStatus).Signaled() {
				t.Fatalf("child was not killed (%v): %s", err, out)
			}
			if !publish.Pending(dir) {
				t.Fatalf("the killed rewrite left nothing to recover")
			}

			e2 := open(t, lore.Options{Home: home})
			if got := fingerprint(t, e2, "ev"); got != want {
				t.Fatalf("after the crash the table holds %s, want %s", got, want)
			}
			if publish.Pending(dir) {
				t.Fatal("reading the table did not settle the interrupted rewrite")
			}
			if err := e2.Catalog().IntegrityCheck(context.Background()); err != nil {
				t.Fatal(err)
			}
			row := optimizeRow(t, e2, "OPTIMIZE ev")
			if row["recovered"] != "true" {
				t.Fatalf("the next OPTIMIZE reports %v", row)
			}
			if got := fingerprint(t, e2, "ev"); got != want {
				t.Fatalf("after OPTIMIZE the table holds %s, want %s", got, want)
			}
			if row := optimizeRow(t, e2, "OPTIMIZE ev"); row["recovered"] != "false" {
				t.Fatalf("the OPTIMIZE after the one that reported the recovery reports %v", row)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(dir, publish.Dir, "*", "*")); len(leftovers) > 0 {
				t.Fatalf("staging left behind: %v", leftovers)
			}
		})
	}
}

// copyDir copies the regular files of src (one level) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range ents {
		if en.IsDir() || strings.HasPrefix(en.Name(), "_") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, en.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
