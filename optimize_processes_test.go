package lore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/publish"
)

// TestOptimizeReaderChild is the reading process of the tests below. With
// LORE_READER_DIR set it opens an engine of its own over that directory and counts
// its rows: once (LORE_READER_MODE=once, printing the count), or over and over until
// its stdin closes (loop), printing "ready" after the first count and, at the end,
// "counts N failed M". A count other than LORE_READER_WANT prints "BAD" and fails.
func TestOptimizeReaderChild(t *testing.T) {
	dir := os.Getenv("LORE_READER_DIR")
	if dir == "" {
		t.Skip("run by the multi-process OPTIMIZE tests")
	}
	e, err := lore.Open(context.Background(), lore.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	count := func() (string, error) {
		res, err := e.Query(context.Background(), "SELECT count(*) FROM '"+dir+"'",
			map[string]string{"use_statistics": "false", "result_cache": "false"})
		if err != nil {
			return "", err
		}
		return cell(res, 0, 0), nil
	}
	if os.Getenv("LORE_READER_MODE") == "once" {
		n, err := count()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("count", n)
		return
	}
	want := os.Getenv("LORE_READER_WANT")
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	counts, failed := 0, map[errs.Code]int{}
	for {
		select {
		case <-stop:
			fmt.Printf("counts %d failed %v\n", counts, failed)
			return
		default:
		}
		n, err := count()
		if err != nil {
			failed[errs.CodeOf(err)]++
			continue
		}
		if n != want {
			fmt.Printf("BAD counted %s rows, want %s\n", n, want)
			t.Fatalf("counted %s rows, want %s", n, want)
		}
		if counts++; counts == 1 {
			fmt.Println("ready")
		}
	}
}

// readerChild starts TestOptimizeReaderChild over dir with the extra environment.
func readerChild(dir string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOptimizeReaderChild$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), "LORE_READER_DIR="+dir), env...)
	return cmd
}

// TestOptimizeOtherProcessReads counts a table in another process, over and over,
// while this one rewrites it twenty times: every count the other process finishes
// must be the table's row count, never the rows of both the new files and the ones
// they replace. Each rename of a publish is slowed, so that a listing falling between
// the renames and the deletes is likely, not a rare accident.
func TestOptimizeOtherProcessReads(t *testing.T) {
	if testing.Short() {
		t.Skip("rewrites a table twenty times beside another process")
	}
	dir := events(t, 40_000, 8, 2_000, false)
	e := open(t, lore.Options{})
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
	want := cell(query(t, e, "SELECT count(*) FROM ev"), 0, 0)

	cmd := readerChild(dir, "LORE_READER_MODE=loop", "LORE_READER_WANT="+want)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out []string
	for line := range lines {
		if out = append(out, line); line == "ready" {
			break
		}
	}

	publish.FailPoint = func(step string) {
		if step == "renamed" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	defer func() { publish.FailPoint = nil }()
	for i := 0; i < 20; i++ {
		optimizeRow(t, e, "OPTIMIZE ev WITH (file_bytes = 100000)")
	}
	publish.FailPoint = nil
	stdin.Close()
	for line := range lines {
		out = append(out, line)
	}
	werr := cmd.Wait()
	report := strings.Join(out, "\n")
	if werr != nil || strings.Contains(report, "BAD") {
		t.Fatalf("the other process (%v):\n%s", werr, report)
	}
	counts, summary := 0, ""
	for _, line := range out {
		if strings.HasPrefix(line, "counts ") {
			counts, _ = strconv.Atoi(strings.Fields(line)[1])
			summary = line
		}
	}
	if counts < 20 {
		t.Fatalf("the other process counted only %d times:\n%s", counts, report)
	}
	t.Logf("the other process: %s", summary)
}

// TestOptimizeRecoveredAcrossProcesses kills an OPTIMIZE half way through its
// publish, has a second process settle it by reading the table, and checks that a
// third process (this one, whose engine never saw the recovery) reports it: its
// first OPTIMIZE says recovered=true, the next false.
func TestOptimizeRecoveredAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary twice")
	}
	dir := filepath.Join(t.TempDir(), "events")
	copyDir(t, events(t, 40_000, 5, 4_000, false), dir)
	home := t.TempDir()
	e := open(t, lore.Options{Home: home})
	query(t, e, "CREATE TABLE ev WITH (location = '"+dir+"', clustered_by = ARRAY['user_id'])")
	want := cell(query(t, e, "SELECT count(*) FROM ev"), 0, 0)
	e.Close()

	crash := exec.Command(os.Args[0], "-test.run", "^TestOptimizeCrashChild$", "-test.count=1")
	crash.Env = append(os.Environ(), "LORE_CRASH_HOME="+home, "LORE_CRASH_STEP=deleted", "LORE_CRASH_AT=1")
	out, err := crash.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || !ee.Sys().(syscall.WaitStatus).Signaled() {
		t.Fatalf("the OPTIMIZE was not killed (%v): %s", err, out)
	}
	if !publish.Pending(dir) || publish.Recovered(dir) {
		t.Fatalf("after the kill: pending %v, recovered %v", publish.Pending(dir), publish.Recovered(dir))
	}

	out, err = readerChild(dir, "LORE_READER_MODE=once").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "count "+want+"\n") {
		t.Fatalf("the reading process (%v), want count %s:\n%s", err, want, out)
	}
	if publish.Pending(dir) || !publish.Recovered(dir) {
		t.Fatalf("after the read: pending %v, recovered %v", publish.Pending(dir), publish.Recovered(dir))
	}

	e3 := open(t, lore.Options{Home: home})
	if row := optimizeRow(t, e3, "OPTIMIZE ev"); row["recovered"] != "true" || row["rows"] != want {
		t.Fatalf("the first OPTIMIZE after the recovery reports %v", row)
	}
	if row := optimizeRow(t, e3, "OPTIMIZE ev"); row["recovered"] != "false" {
		t.Fatalf("the second OPTIMIZE after the recovery reports %v", row)
	}
}
