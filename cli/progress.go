package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressBar draws "label [#####.....]  42%  1.2M/2.9M rows  3.1s" on one terminal
// line, redrawn in place at most ten times a second. It is only used when the
// stream is a terminal; calls must not overlap.
type progressBar struct {
	w     io.Writer
	label string
	start time.Time
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer, label string) *progressBar {
	return &progressBar{w: w, label: label, start: time.Now()}
}

const barWidth = 30

// update redraws the bar for done of total units.
func (p *progressBar) update(done, total int64) {
	now := time.Now()
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	frac := 0.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	filled := int(frac * barWidth)
	fmt.Fprintf(p.w, "\r%s [%s%s] %3.0f%%  %s/%s rows  %.1fs",
		p.label, strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled),
		frac*100, humanCount(done), humanCount(total), now.Sub(p.start).Seconds())
	p.drawn = true
}

// finish ends the bar's line so later output starts on a fresh one.
func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}

// humanCount renders a count with a K/M/G suffix.
func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// engineProgress draws the engine's long work (lore.Options.Progress) as a bar on w
// when w is a terminal, and is nil otherwise.
func engineProgress(w io.Writer) func(what string, done, total int64) {
	if !isTerminal(w) {
		return nil
	}
	var bar *progressBar
	var label string
	return func(what string, done, total int64) {
		if bar == nil || label != what {
			bar, label = newProgressBar(w, what), what
		}
		bar.update(done, total)
		if done >= total {
			bar.finish()
			bar = nil
		}
	}
}
