package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMutationExperiment generates an events table with the lore command, flips
// random bytes across its file (a third of the time in the footer alone) and runs
// queries on each mutant in a child process, so that a fatal error (which no recover
// sees) shows as a crash. Every mutant must be answered or refused with
// CORRUPT_SOURCE (or, for a mutant that is a valid file of another schema, refused
// as a query that no longer fits it). It runs only when LORE_MUTATE_N sets how many mutants to try
// (LORE_BIN names a built lore command; otherwise it is built; LORE_MUTATE_SEED
// picks the mutations). See docs/fuzzing.md.
func TestMutationExperiment(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LORE_MUTATE_N"))
	if n <= 0 {
		t.Skip("set LORE_MUTATE_N to run the mutation experiment")
	}
	seed, _ := strconv.ParseUint(os.Getenv("LORE_MUTATE_SEED"), 10, 64)
	dir := t.TempDir()
	bin := os.Getenv("LORE_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "lore")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/loredb/lore/cmd/lore").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	run := func(timeout time.Duration, args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "GOMEMLIMIT=2GiB")
		return cmd.CombinedOutput()
	}
	events := filepath.Join(dir, "events")
	if out, err := run(time.Minute, "gen", "events", "--rows", "50000", "--files", "1", "--row-group-rows", "10000",
		"--seed", "3", "--out", events); err != nil {
		t.Fatalf("lore gen events: %v\n%s", err, out)
	}
	base, err := os.ReadFile(filepath.Join(events, "part-00000.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	footer := len(base) - 8 - int(binary.LittleEndian.Uint32(base[len(base)-8:]))
	mutants := filepath.Join(dir, "mutant")
	if err := os.Mkdir(mutants, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(mutants, "part-00000.parquet")
	queries := []string{
		"SELECT count(*) FROM '%s'",
		"SELECT sum(amount), max(category) FROM '%s'",
		"SELECT status, count(*), avg(latency_ms) FROM '%s' GROUP BY status",
		"SELECT country, min(ts), max(user_id) FROM '%s' WHERE flag GROUP BY country",
		"SELECT * FROM '%s' WHERE user_id %% 1000 = 7 LIMIT 5",
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6f7265))
	var answered, refused, reshaped, other, crashed int
	for i := 0; i < n; i++ {
		data := bytes.Clone(base)
		var flips []string
		for range 1 + rng.IntN(3) {
			from := 0
			if rng.IntN(3) == 0 {
				from = footer
			}
			p := from + rng.IntN(len(data)-from)
			old := data[p]
			data[p] = byte(rng.IntN(256))
			flips = append(flips, fmt.Sprintf("byte %d 0x%02x→0x%02x", p, old, data[p]))
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		q := fmt.Sprintf(queries[i%len(queries)], filepath.Join(mutants, "*.parquet"))
		out, err := run(2*time.Minute, "sql", "--home", filepath.Join(dir, "home"), "-c", q)
		text := string(out)
		switch {
		case err == nil:
			answered++
		case strings.Contains(text, "fatal error") || strings.Contains(text, "panic:") ||
			strings.Contains(text, "goroutine ") || cmdCrashed(err):
			crashed++
			keep := filepath.Join(dir, fmt.Sprintf("crash-%d.parquet", i))
			_ = os.WriteFile(keep, data, 0o644)
			t.Errorf("mutant %d (%s) crashed %q: %v\n%.2000s", i, strings.Join(flips, ", "), q, err, text)
		case strings.Contains(text, "CORRUPT_SOURCE"):
			refused++
		case strings.HasPrefix(text, "ANALYSIS_ERROR"):
			// A flipped byte in a column's name or type leaves a valid file of another
			// schema, which the query no longer fits.
			reshaped++
		default:
			other++
			t.Errorf("mutant %d (%s): %q failed without CORRUPT_SOURCE: %.500s", i, strings.Join(flips, ", "), q, text)
		}
	}
	t.Logf("%d mutants (seed %d): %d answered, %d refused with CORRUPT_SOURCE, %d of another schema, %d other errors, %d crashes",
		n, seed, answered, refused, reshaped, other, crashed)
}

// cmdCrashed reports whether a child process died of a signal, timed out, or exited
// as the Go runtime does on a fatal error or an unrecovered panic: status 2, which the
// command otherwise gives only to a wrong command line, and these are right.
func cmdCrashed(err error) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return true
	}
	return ee.ExitCode() == 2 || ee.ExitCode() == -1
}
