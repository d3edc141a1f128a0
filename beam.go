package lore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/dist"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/stats"
	"github.com/loredb/lore/stats/profile"
	"github.com/loredb/lore/storage/s3"
)

// BeamOptions say how work run with execution = 'beam' reaches Apache Beam: through
// the lore-beam command (built from the dist/beam module), which submits the
// pipeline to a runner and waits for it. See docs/distributed.md.
type BeamOptions struct {
	// Command is the lore-beam executable. Default: $LORE_BEAM_COMMAND, else
	// lore-beam next to the running executable, else lore-beam on $PATH.
	Command string
	// Runner is Beam's runner: prism (Beam's local runner, in the lore-beam
	// process), universal (a job server over the portable Job API at Endpoint),
	// flink, spark, dataflow. Default: $LORE_BEAM_RUNNER, else prism.
	Runner string
	// Endpoint is the job server's host:port, for the runners that submit to one.
	// Default: $LORE_BEAM_ENDPOINT.
	Endpoint string
	// Flags are further Beam flags handed to lore-beam as they are
	// (--environment_type=LOOPBACK, Dataflow's --project, --region, …).
	Flags []string
	// WorkDir is where a run's job and results files are written: a directory
	// every worker can write and the engine read (a shared mount for a cluster).
	// Default: $LORE_BEAM_WORKDIR, else the spill directory.
	WorkDir string
	// Above is the size from which a statement under execution = 'auto' (the
	// default) runs on Beam by itself: a query whose aggregate over a table would
	// read at least Above compressed bytes of column chunks, an ANALYZE … WITH
	// (sketches = true) of a table whose files hold at least Above bytes. 0: none —
	// only execution = 'beam' runs there. Default: $LORE_BEAM_ABOVE (a size such as
	// 100GiB).
	Above int64
}

// The environment variables that set BeamOptions the options leave unset.
const (
	beamCommandEnv  = "LORE_BEAM_COMMAND"
	beamRunnerEnv   = "LORE_BEAM_RUNNER"
	beamEndpointEnv = "LORE_BEAM_ENDPOINT"
	beamWorkDirEnv  = "LORE_BEAM_WORKDIR"
	beamAboveEnv    = "LORE_BEAM_ABOVE"
)

// fromEnvironment fills what o leaves unset from the environment, and the runner's
// default.
func (o *BeamOptions) fromEnvironment(spillDir string) {
	set := func(field *string, env, def string) {
		if *field == "" {
			*field = os.Getenv(env)
		}
		if *field == "" {
			*field = def
		}
	}
	set(&o.Command, beamCommandEnv, "")
	set(&o.Runner, beamRunnerEnv, "prism")
	set(&o.Endpoint, beamEndpointEnv, "")
	set(&o.WorkDir, beamWorkDirEnv, spillDir)
}

// aboveFromEnvironment takes Above from $LORE_BEAM_ABOVE when o leaves it unset.
func (o *BeamOptions) aboveFromEnvironment() error {
	if v := os.Getenv(beamAboveEnv); o.Above == 0 && v != "" {
		n, err := parseBytes(v)
		if err != nil || n < 1 {
			return errs.New(errs.InvalidSetting, "%s: invalid size %q: want a positive size such as 100GiB", beamAboveEnv, v)
		}
		o.Above = n
	}
	return nil
}

// validate reports a runner lore-beam cannot be asked for.
func (o *BeamOptions) validate() error {
	if o.Above < 0 {
		return errs.New(errs.InvalidSetting, "Beam's size threshold %d is negative", o.Above)
	}
	if o.Runner == "" || strings.ContainsAny(o.Runner, " \t\n=") || strings.HasPrefix(o.Runner, "-") {
		return errs.New(errs.InvalidSetting, "Beam runner %q is not a runner's name (prism, universal, flink, spark, dataflow)", o.Runner)
	}
	if o.Runner == "universal" && o.Endpoint == "" {
		return errs.New(errs.InvalidSetting, "Beam runner universal needs the job server's endpoint (host:port)")
	}
	return nil
}

// command finds the lore-beam executable.
func (o *BeamOptions) command() (string, error) {
	if o.Command != "" {
		return o.Command, nil
	}
	if self, err := os.Executable(); err == nil {
		next := filepath.Join(filepath.Dir(self), "lore-beam")
		if st, err := os.Stat(next); err == nil && !st.IsDir() {
			return next, nil
		}
	}
	if p, err := exec.LookPath("lore-beam"); err == nil {
		return p, nil
	}
	return "", errs.New(errs.InvalidSetting, "execution = 'beam' needs the lore-beam command: none next to this executable or on PATH, and $%s is not set (build it: cd dist/beam && CGO_ENABLED=0 go build ./cmd/lore-beam)", beamCommandEnv)
}

// Distributed is the part of a statement that ran on Apache Beam.
type Distributed struct {
	// Runner is the Beam runner the work was submitted to, Endpoint its job
	// server when it has one.
	Runner   string `json:"runner"`
	Endpoint string `json:"endpoint,omitempty"`
	// ZonesShipped is the number of zones the workers read, Bytes the compressed
	// size of the column chunks they read of them (ANALYZE's: the files' size).
	ZonesShipped int   `json:"zones_shipped"`
	Bytes        int64 `json:"bytes"`
	// PipelineMS is the wall time from submitting the pipeline to its end, as the
	// engine saw it (the runner's start-up included); MergeMS the time the engine
	// took to read the workers' results and merge them into the record.
	PipelineMS float64 `json:"pipeline_ms"`
	MergeMS    float64 `json:"merge_ms"`
	// WorkerMS is the time workers took over the zones, summed, and SlowestZoneMS
	// the longest a worker took over one (a distributed aggregate's; ANALYZE's
	// workers report none).
	WorkerMS      float64 `json:"worker_ms,omitempty"`
	SlowestZoneMS float64 `json:"slowest_zone_ms,omitempty"`
}

// beamFullRead upgrades rec — the footers' record of table t, listing l at version
// v — to depth full as fullRead does, the zones read by Beam's workers: the zones are
// described for them (dist.ZoneRefs) and written as a job, lore-beam runs it, and
// the results it writes are applied to rec. A worker that finds a file changed
// after planning fails the run with SOURCE_CHANGED.
func (e *Engine) beamFullRead(ctx context.Context, t catalog.Table, l *source.Listing, rec *stats.Record, v source.Version, memoryLimit int64) (*Distributed, error) {
	ref := dist.TableRefOf(t.Format, t.Location, l, v)
	e.addressS3(&ref, e.tableS3(t.Storage))
	zones, err := dist.ZoneRefs(l, rec, ref)
	if err != nil {
		return nil, err
	}
	d, err := e.newDistributed(len(zones))
	if err != nil || len(zones) == 0 {
		return d, err // nothing to read: the footers' record is the full one
	}
	d.Bytes = l.Bytes()
	job, err := dist.MarshalJob(nil, zones)
	if err != nil {
		return nil, err
	}
	err = e.runJob(ctx, "analyze", job, memoryLimit, d, func(r io.Reader) error {
		zoneResults, columns, err := dist.ReadResults(ctx, r, len(zones), len(rec.Columns))
		if err != nil {
			return err
		}
		return profile.Apply(l, rec, zoneResults, columns)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// addressS3 sets in ref the address of the S3-compatible store cfg names.
func (e *Engine) addressS3(ref *source.TableRef, cfg s3.Config) {
	ref.S3Endpoint, ref.S3Region, ref.S3AllowHTTP, ref.S3PathStyle = cfg.Endpoint, cfg.Region, cfg.AllowHTTP, cfg.PathStyle
}

// onBeam says whether work that reads bytes compressed bytes runs on Beam under the
// execution setting: always under 'beam', from the engine's Beam.Above under 'auto'.
func (e *Engine) onBeam(execution string, bytes int64) bool {
	return execution == "beam" || e.beamAuto(execution) && bytes >= e.opts.Beam.Above
}

// beamAuto says whether the execution setting leaves it to the size of a
// statement's read whether it runs on Beam.
func (e *Engine) beamAuto(execution string) bool {
	return execution == "auto" && e.opts.Beam.Above > 0
}

// newDistributed checks the engine's Beam options and begins the record of a run
// that ships zones zones.
func (e *Engine) newDistributed(zones int) (*Distributed, error) {
	o := e.opts.Beam
	if err := o.validate(); err != nil {
		return nil, err
	}
	if _, err := o.command(); err != nil {
		return nil, err
	}
	return &Distributed{Runner: o.Runner, Endpoint: o.Endpoint, ZonesShipped: zones}, nil
}

// runJob writes job to a work directory of its own, has lore-beam run it with its
// subcommand sub (analyze or aggregate), and hands read the results it wrote. It
// records in d the pipeline's wall time and the time read took.
func (e *Engine) runJob(ctx context.Context, sub string, job []byte, memoryLimit int64, d *Distributed, read func(io.Reader) error) error {
	o := e.opts.Beam
	command, err := o.command()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return errs.New(errs.SourceUnavailable, "cannot make the Beam work directory: %w", err)
	}
	dir, err := os.MkdirTemp(o.WorkDir, "beam-"+sub+"-")
	if err != nil {
		return errs.New(errs.SourceUnavailable, "cannot make the Beam work directory: %w", err)
	}
	defer os.RemoveAll(dir)
	jobPath, results := filepath.Join(dir, "job"), filepath.Join(dir, "results.txt")
	if err := os.WriteFile(jobPath, job, 0o644); err != nil {
		return errs.New(errs.SourceUnavailable, "cannot write the Beam job: %w", err)
	}
	args := []string{sub, "--job", jobPath, "--results", results,
		"--memory_limit", strconv.FormatInt(memoryLimit, 10), "--runner", o.Runner}
	if o.Endpoint != "" {
		args = append(args, "--endpoint", o.Endpoint)
	}
	args = append(args, o.Flags...)
	start := time.Now()
	if err := runBeam(ctx, command, args); err != nil {
		return err
	}
	d.PipelineMS = millis(time.Since(start))
	start = time.Now()
	f, err := os.Open(results)
	if err != nil {
		return errs.New(errs.Internal, "lore-beam finished without its results: %w", err)
	}
	defer f.Close()
	if err := read(f); err != nil {
		return err
	}
	d.MergeMS = millis(time.Since(start))
	return nil
}

// addZoneTimes adds the times workers took over zones, one each, to d.
func (d *Distributed) addZoneTimes(took []time.Duration) {
	for _, t := range took {
		d.WorkerMS += millis(t)
		d.SlowestZoneMS = max(d.SlowestZoneMS, millis(t))
	}
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// beamStderrTail is how much of lore-beam's standard error is kept for its report.
const beamStderrTail = 64 << 10

// runBeam runs lore-beam and waits for it. Cancelling ctx interrupts it (lore-beam
// then cancels its job), and kills it if it has not ended a while later. A failed
// run is the error its last line reports ("lore-beam: CODE: message"), with its code.
func runBeam(ctx context.Context, command string, args []string) error {
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return errs.New(errs.Canceled, "the Beam run was cancelled: %w", ctx.Err())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return errs.New(errs.InvalidSetting, "cannot run lore-beam (%s): %w", command, err)
	}
	return beamFailure(stderr.Bytes(), err)
}

// beamFailure is the error of a failed lore-beam run from its output: its last line
// "lore-beam: CODE: message" when it wrote one, else INTERNAL with the output's end.
func beamFailure(out []byte, runErr error) error {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		rest, ok := strings.CutPrefix(lines[i], "lore-beam: ")
		if !ok {
			continue
		}
		code, msg, ok := strings.Cut(rest, ": ")
		if ok && errs.Known(errs.Code(code)) {
			return errs.New(errs.Code(code), "on Beam: %s", msg)
		}
		break
	}
	last := string(out)
	if len(last) > 2000 {
		last = "…" + last[len(last)-2000:]
	}
	return errs.New(errs.Internal, "lore-beam failed (%v): %s", runErr, strings.TrimSpace(last))
}

// tailBuffer keeps the last beamStderrTail bytes written to it.
type tailBuffer struct{ b bytes.Buffer }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if over := t.b.Len() - beamStderrTail; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte { return t.b.Bytes() }

// describe is the full_read value of ANALYZE's result for a run on d.
func (d *Distributed) describe() string { return fmt.Sprintf("beam:%s", d.Runner) }
