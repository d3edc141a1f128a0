package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	homedir "github.com/loredb/lore/internal/home"
	"github.com/loredb/lore/types"
)

// runTable is "lore table stats|detail NAME": a table's statistics record (SHOW
// STATS FOR) or its detail (DESCRIBE DETAIL).
func runTable(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "table", "stats|detail NAME [--home DIR] [--memory-limit SIZE] [--format FORMAT]")
	home := fs.String("home", "", "the Lore home `directory` (default $LORE_HOME, else ./.lore)")
	memLimit := addMemoryLimit(fs)
	format := fs.String("format", "table", "output `format`: "+strings.Join(Formats, ", "))
	if len(args) == 0 {
		return usageError(e, fs, "want stats or detail and a table name")
	}
	what, args := args[0], args[1:]
	var stmt string
	switch what {
	case "stats":
		stmt = "SHOW STATS FOR "
	case "detail":
		stmt = "DESCRIBE DETAIL "
	case "-h", "-help", "--help":
		fs.Usage()
		return exitOK
	default:
		return usageError(e, fs, "unknown table command %q (want stats or detail)", what)
	}
	name, args, ok := tableName(args)
	if !ok {
		return usageError(e, fs, "want one table name")
	}
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 || !validFormat(*format) {
		return usageError(e, fs, "unexpected argument or unknown format")
	}
	return runOne(ctx, e, "table "+what, lore.Options{Home: homedir.Dir(*home), MemoryLimit: int64(*memLimit)}, nil, *format, stmt+types.QuoteIdent(name))
}

// runAnalyze is "lore analyze NAME [--sketches [--runner R [--endpoint HOST:PORT]]]
// [--distinct | --columns a,b]".
func runAnalyze(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "analyze", "NAME [--sketches [--runner prism|universal|… [--endpoint HOST:PORT] [--beam-flag F]…]] [--distinct | --columns a,b] [--home DIR] [--memory-limit SIZE]")
	home := fs.String("home", "", "the Lore home `directory` (default $LORE_HOME, else ./.lore)")
	memLimit := addMemoryLimit(fs)
	format := fs.String("format", "table", "output `format`: "+strings.Join(Formats, ", "))
	sketches := fs.Bool("sketches", false, "read every column once for distinct-count and quantile sketches")
	distinct := fs.Bool("distinct", false, "count every column's distinct values exactly")
	columns := fs.String("columns", "", "count these `columns`' distinct values exactly (comma-separated)")
	beam := addBeamFlags(fs, "the full read of --sketches")
	name, status, ok := tableCommand(e, fs, args, format)
	if !ok {
		return status
	}
	opts := lore.Options{Home: homedir.Dir(*home), MemoryLimit: int64(*memLimit)}
	settings, given := beam.apply(&opts)
	if given && (!*sketches || *beam.runner == "") {
		return usageError(e, fs, "--runner, --endpoint and --beam-flag run the full read of --sketches: give --sketches and --runner")
	}
	var with []string
	if *sketches {
		with = append(with, "sketches = true")
	}
	if *distinct {
		with = append(with, "distinct = true")
	}
	if *columns != "" {
		var quoted []string
		for _, c := range strings.Split(*columns, ",") {
			quoted = append(quoted, types.QuoteString(strings.TrimSpace(c)))
		}
		with = append(with, "columns = ARRAY["+strings.Join(quoted, ", ")+"]")
	}
	stmt := "ANALYZE " + types.QuoteIdent(name)
	if len(with) > 0 {
		stmt += " WITH (" + strings.Join(with, ", ") + ")"
	}
	return runOne(ctx, e, "analyze", opts, settings, *format, stmt)
}

// beamFlags are a command's flags that run its reading work on Apache Beam.
type beamFlags struct {
	runner, endpoint *string
	flags            listFlag
}

// addBeamFlags adds to fs the flags that run work (what it says) on Beam.
func addBeamFlags(fs *flag.FlagSet, work string) *beamFlags {
	b := &beamFlags{
		runner:   fs.String("runner", "", "run "+work+" on Apache Beam's `runner` (prism, universal, flink, spark, dataflow) through lore-beam"),
		endpoint: fs.String("endpoint", "", "the Beam job server's `host:port` (--runner universal)"),
	}
	fs.Var(&b.flags, "beam-flag", "a further Beam `flag` for lore-beam, such as --environment_type=LOOPBACK (repeatable)")
	return b
}

// apply sets the Beam options the flags give, and returns the settings that run the
// statement on Beam, and whether any flag was given.
func (b *beamFlags) apply(opts *lore.Options) (map[string]string, bool) {
	if *b.runner == "" && *b.endpoint == "" && len(b.flags) == 0 {
		return nil, false
	}
	opts.Beam = lore.BeamOptions{Runner: *b.runner, Endpoint: *b.endpoint, Flags: b.flags}
	return map[string]string{"execution": "beam"}, true
}

// tableName takes the leading table name off args (flags may follow it).
func tableName(args []string) (string, []string, bool) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return "", args, false
	}
	return args[0], args[1:], true
}

// runOne runs one statement on an engine opened with opts, under settings, and
// prints its result.
func runOne(ctx context.Context, e *env, what string, opts lore.Options, settings map[string]string, format, stmt string) int {
	opts.Progress = engineProgress(e.stderr)
	eng, err := lore.Open(ctx, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "lore %s: %s\n", what, errs.Describe(err, ""))
		return exitError
	}
	defer eng.Close()
	res, err := eng.Query(ctx, stmt, settings)
	if err != nil {
		fmt.Fprintf(e.stderr, "lore %s: %s\n", what, errs.Describe(err, stmt))
		return exitError
	}
	if err := WriteResult(e.stdout, format, res); err != nil {
		fmt.Fprintf(e.stderr, "lore %s: %v\n", what, err)
		return exitError
	}
	return exitOK
}

// tableCommand reads the arguments of a command on one table (lore analyze, lore
// optimize): the table's name, then fs's flags, of which format must name an output
// format. ok is false when the command should end with status (help, a usage error).
func tableCommand(e *env, fs *flag.FlagSet, args []string, format *string) (name string, status int, ok bool) {
	name, args, ok = tableName(args)
	if !ok {
		if len(args) > 0 && strings.Contains(args[0], "help") {
			fs.Usage()
			return "", exitOK, false
		}
		return "", usageError(e, fs, "want one table name"), false
	}
	if status, ok := parseFlags(fs, args); !ok {
		return "", status, false
	}
	if fs.NArg() > 0 || !validFormat(*format) {
		return "", usageError(e, fs, "unexpected argument or unknown format"), false
	}
	return name, 0, true
}
