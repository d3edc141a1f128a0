package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

// Report is everything one invocation measured; --json writes it as is.
type Report struct {
	Machine        Machine           `json:"machine"`
	Threads        int               `json:"threads"`
	Rounds         int               `json:"rounds"`
	TimeoutSeconds float64           `json:"timeout_seconds"`
	LoreSettings   map[string]string `json:"lore_settings"`
	MemoryNote     string            `json:"memory_note"`
	Notes          []string          `json:"notes,omitempty"`
	Suites         []*SuiteResult    `json:"suites"`
	// Processes are the suites run with --processes.
	Processes []*ProcessSuiteResult `json:"processes,omitempty"`
	// SuiteErrors are suites that could not run at all (no data, no generator).
	SuiteErrors map[string]string `json:"suite_errors,omitempty"`
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WriteHeader writes what every table depends on: the machine and the settings.
func (r *Report) WriteHeader(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %s, %d cores, GOMAXPROCS %d", m.CPU, m.Cores, m.GOMAXPROCS)
	if m.MemoryBytes > 0 {
		fmt.Fprintf(w, ", %s RAM", bytesText(m.MemoryBytes))
	}
	fmt.Fprintf(w, ", %s, %s, DuckDB %s\n", m.OS, m.GoVersion, m.DuckDBVersion)
	var settings []string
	for _, k := range slices.Sorted(maps.Keys(r.LoreSettings)) {
		settings = append(settings, k+"="+r.LoreSettings[k])
	}
	fmt.Fprintf(w, "threads %d (both engines), %d rounds after one warm-up each, timeout %gs, Lore settings: %s\n",
		r.Threads, r.Rounds, r.TimeoutSeconds, strings.Join(settings, " "))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// WriteTable writes one suite's table.
func WriteTable(w io.Writer, s *SuiteResult) {
	d := s.Data
	fmt.Fprintf(w, "\nsuite %s: %s, %d files, %s (%s)\n\n", s.Suite, d.Description, d.Files, bytesText(d.Bytes), d.Dir)
	for _, st := range s.Setup {
		fmt.Fprintf(w, "setup (lore): %s — %.1f ms\n", st.SQL, st.ElapsedMS)
	}
	if len(s.Setup) > 0 {
		fmt.Fprintln(w)
	}
	head := []string{"query", "lore ms", "duckdb ms", "lore/duckdb", "equal", "rows", "lore mode", "lore heap", "lore ΔRSS", "duckdb ΔRSS"}
	var body [][]string
	for _, q := range s.Queries {
		eq := "-"
		if q.Equal != nil {
			eq = map[bool]string{true: "yes", false: "NO"}[*q.Equal]
		}
		ratio := "-"
		if q.Ratio > 0 {
			ratio = ratioText(q.Ratio)
		}
		rows := "-"
		if q.Lore.OK() {
			rows = fmt.Sprint(q.Lore.Rows)
		} else if q.DuckDB.OK() {
			rows = fmt.Sprint(q.DuckDB.Rows)
		}
		mode := "-"
		if q.Lore.Record != nil {
			mode = q.Lore.Record.Execution.Mode
		}
		body = append(body, []string{q.Name, msText(&q.Lore), msText(&q.DuckDB), ratio, eq, rows, mode,
			bytesText(int64(q.Lore.PeakHeapBytes)), bytesText(q.Lore.PeakRSSDeltaBytes), bytesText(q.DuckDB.PeakRSSDeltaBytes)})
	}
	writeAligned(w, head, body)
	fmt.Fprintln(w)
	n := 0
	for _, q := range s.Queries {
		if q.Ratio > 0 {
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "geometric mean of lore/duckdb over %d queries: %.2f\n", n, s.GeoMeanRatio)
	} else {
		fmt.Fprintln(w, "geometric mean of lore/duckdb: no query ran on both engines")
	}
	fmt.Fprintf(w, "results compared: %d, equal: %d, different: %d\n", s.Compared, s.Compared-s.Unequal, s.Unequal)
	for _, q := range s.Queries {
		if q.Equal != nil && !*q.Equal {
			fmt.Fprintf(w, "  %s differs: %s\n", q.Name, q.Diff)
		}
		for _, r := range []struct {
			engine string
			run    *Run
		}{{"lore", &q.Lore}, {"duckdb", &q.DuckDB}} {
			if !r.run.OK() {
				fmt.Fprintf(w, "  %s failed on %s: %s\n", q.Name, r.engine, r.run.Error)
			}
		}
	}
}

func msText(r *Run) string {
	if !r.OK() {
		return r.Status()
	}
	switch {
	case r.MedianMS >= 100:
		return fmt.Sprintf("%.0f", r.MedianMS)
	case r.MedianMS >= 10:
		return fmt.Sprintf("%.1f", r.MedianMS)
	}
	return fmt.Sprintf("%.2f", r.MedianMS)
}

// writeAligned writes a markdown table padded so that it also reads as plain
// text: the first column left-aligned, the others right-aligned.
func writeAligned(w io.Writer, head []string, body [][]string) {
	width := make([]int, len(head))
	for _, r := range append([][]string{head}, body...) {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(r []string) {
		var sb strings.Builder
		sb.WriteString("|")
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				sb.WriteString(" " + c + pad + " |")
			} else {
				sb.WriteString(" " + pad + c + " |")
			}
		}
		fmt.Fprintln(w, sb.String())
	}
	line(head)
	sep := make([]string, len(head))
	for i := range sep {
		if i == 0 {
			sep[i] = strings.Repeat("-", width[i])
		} else {
			sep[i] = strings.Repeat("-", width[i]-1) + ":"
		}
	}
	line(sep)
	for _, r := range body {
		line(r)
	}
}

// bytesText renders a byte count with a binary unit.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return fmt.Sprintf("%.1f PiB", f/unit)
}

// ratioText renders a ratio with two decimals, or with two significant digits when
// it is too small for that (an answer from statistics against a scan).
func ratioText(r float64) string {
	if r < 0.1 {
		return fmt.Sprintf("%.2g", r)
	}
	return fmt.Sprintf("%.2f", r)
}
