package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/loredb/lore"
	homedir "github.com/loredb/lore/internal/home"
	"github.com/loredb/lore/types"
)

// runOptimize is "lore optimize NAME [--row-group-rows N] [--row-group-bytes N]
// [--file-bytes N] [--where PREDICATE] [--runner R …]": OPTIMIZE, with a progress bar
// on a terminal, the sort on Apache Beam with --runner.
func runOptimize(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "optimize", "NAME [--where PREDICATE] [--row-group-rows N] [--row-group-bytes N] [--file-bytes N] [--runner prism|universal|… [--endpoint HOST:PORT] [--beam-flag F]…] [--home DIR] [--memory-limit SIZE]")
	home := fs.String("home", "", "the Lore home `directory` (default $LORE_HOME, else ./.lore)")
	memLimit := addMemoryLimit(fs)
	format := fs.String("format", "table", "output `format`: "+strings.Join(Formats, ", "))
	where := fs.String("where", "", "rewrite only the files that may hold rows matching this SQL `predicate`")
	rgRows := fs.Int64("row-group-rows", 0, "rows per row group, at most (default 1048576)")
	rgBytes := fs.Int64("row-group-bytes", 0, "encoded bytes per row group, about (default 128 MiB)")
	fileBytes := fs.Int64("file-bytes", 0, "a file is closed at the first row group past this many bytes (default 1 GiB)")
	beam := addBeamFlags(fs, "the sort")
	name, status, ok := tableCommand(e, fs, args, format)
	if !ok {
		return status
	}
	lopts := lore.Options{Home: homedir.Dir(*home), MemoryLimit: int64(*memLimit)}
	settings, given := beam.apply(&lopts)
	if given && *beam.runner == "" {
		return usageError(e, fs, "--endpoint and --beam-flag run the sort on Beam: give --runner")
	}
	var opts []string
	for _, o := range []struct {
		key string
		v   int64
	}{{"row_group_rows", *rgRows}, {"row_group_bytes", *rgBytes}, {"file_bytes", *fileBytes}} {
		if o.v < 0 {
			return usageError(e, fs, "%s must be positive", o.key)
		}
		if o.v > 0 {
			opts = append(opts, fmt.Sprintf("%s = %d", o.key, o.v))
		}
	}
	stmt := "OPTIMIZE " + types.QuoteIdent(name)
	if len(opts) > 0 {
		stmt += " WITH (" + strings.Join(opts, ", ") + ")"
	}
	if strings.TrimSpace(*where) != "" {
		stmt += " WHERE " + *where
	}
	return runOne(ctx, e, "optimize", lopts, settings, *format, stmt)
}
