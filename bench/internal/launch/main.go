// Command launch runs a command and reports its peak resident set and wall time:
// the bench harness's processes mode starts every engine process through it.
//
// It exists because Go starts a child with vfork, and Linux then counts the
// parent's high-water mark in the child's ru_maxrss: measured from the harness,
// an engine would be charged with the harness's own memory. This launcher is a
// small program, so what it adds is small, and it reports its own high-water
// mark so that a child's peak at or below it can be recognised.
//
//	launch --report FILE -- command args...
//
// writes {"max_rss_kib", "launcher_hwm_kib", "wall_ms", "exit_code"} to FILE.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// report is what the launcher learnt about the process it ran.
type report struct {
	// MaxRSSKiB is the child's ru_maxrss.
	MaxRSSKiB int64 `json:"max_rss_kib"`
	// LauncherHWMKiB is the launcher's own high-water mark when it started the
	// child, which the child's ru_maxrss cannot be below.
	LauncherHWMKiB int64   `json:"launcher_hwm_kib"`
	WallMS         float64 `json:"wall_ms"`
	ExitCode       int     `json:"exit_code"`
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("launch", flag.ContinueOnError)
	out := fs.String("report", "", "file that receives the report")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	argv := fs.Args()
	if len(argv) == 0 || *out == "" {
		fmt.Fprintln(os.Stderr, "launch: want --report FILE -- command...")
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	hwm := selfHWMKiB()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		fmt.Fprintf(os.Stderr, "launch: %v\n", err)
		return 1
	}
	rep := report{LauncherHWMKiB: hwm, WallMS: float64(wall.Microseconds()) / 1000, ExitCode: cmd.ProcessState.ExitCode()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rep.MaxRSSKiB = int64(ru.Maxrss) // KiB on Linux
	}
	b, _ := json.Marshal(rep)
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "launch: %v\n", err)
		return 1
	}
	return 0
}

// selfHWMKiB is this process's VmHWM from /proc/self/status (0 when unknown).
func selfHWMKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
