package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TPCHConfig sizes the TPC-H suite's data.
type TPCHConfig struct {
	SF    float64
	Files int
	// DataDir holds the cached data sets (one directory per size).
	DataDir string
	// Lake ("delta" or "iceberg") makes each table also a table of that format over
	// the same files (in a directory beside the data set's, named with -delta or
	// -iceberg), which Lore reads.
	Lake string
	// Flavour is the file flavour (Flavours; "" is "lore"): the other flavours are
	// written once from the lore flavour's files into their own directory.
	Flavour string
	// SmallFiles is the small-files flavour's number of lineitem files (0: 1,000).
	SmallFiles int
	// Threads are DuckDB's threads when it writes a flavour (0: 2).
	Threads int
}

// tpchTables are the eight TPC-H tables; the generator writes each under
// Out/<table>/.
var tpchTables = []string{"region", "nation", "supplier", "part", "partsupp", "customer", "orders", "lineitem"}

//go:embed queries/tpch/*.sql
var tpchFS embed.FS

// orderLine is a query file's comparison header:
//
//	-- order: 2, 3 limit
//
// names the 1-based output columns of the ORDER BY and whether a LIMIT cuts the
// result. A file without it is compared as a multiset.
var orderLine = regexp.MustCompile(`(?m)^--\s*order:\s*([0-9,\s]+?)\s*(limit)?\s*$`)

// TPCHQueries reads the 22 queries from queries/tpch/qNN.sql.
func TPCHQueries() ([]Query, error) {
	names, err := tpchFS.ReadDir("queries/tpch")
	if err != nil {
		return nil, err
	}
	var qs []Query
	for _, e := range names {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := tpchFS.ReadFile(path.Join("queries/tpch", e.Name()))
		if err != nil {
			return nil, err
		}
		q, err := parseQueryFile(strings.TrimSuffix(e.Name(), ".sql"), string(b))
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b Query) int { return strings.Compare(a.Name, b.Name) })
	return qs, nil
}

// parseQueryFile turns a query file into a Query: its order header, and its text
// without comments and without the final semicolon.
func parseQueryFile(name, text string) (Query, error) {
	q := Query{Name: name}
	if m := orderLine.FindStringSubmatch(text); m != nil {
		for f := range strings.SplitSeq(m[1], ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			k, err := strconv.Atoi(f)
			if err != nil || k < 1 {
				return Query{}, fmt.Errorf("%s: bad order column %q", name, f)
			}
			q.Order.Keys = append(q.Order.Keys, k-1)
		}
		q.Order.Limited = m[2] != ""
	}
	var lines []string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--") {
			continue
		}
		lines = append(lines, strings.TrimRight(l, " \t\r"))
	}
	q.SQL = strings.TrimSuffix(strings.TrimSpace(strings.Join(lines, "\n")), ";")
	if q.SQL == "" {
		return Query{}, fmt.Errorf("%s: no query text", name)
	}
	return q, nil
}

// TPCHSuite returns the TPC-H suite, generating its data first when the cache
// under cfg.DataDir does not hold it.
func TPCHSuite(ctx context.Context, cfg TPCHConfig, progress io.Writer) (*Suite, error) {
	qs, err := TPCHQueries()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cfg.DataDir, fmt.Sprintf("tpch-sf%s-%d", strconv.FormatFloat(cfg.SF, 'f', -1, 64), cfg.Files))
	err = ensureData(dir, progress, func(out string, report func(done, total int64)) error {
		return generateTPCH(ctx, cfg.SF, cfg.Files, out, report)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot generate the TPC-H data: %w", err)
	}
	flavour := cfg.Flavour
	if flavour == "" {
		flavour = "lore"
	}
	smallFiles := cfg.SmallFiles
	if smallFiles <= 0 {
		smallFiles = defaultSmallFiles
	}
	if flavour != "lore" {
		src := dir
		dir = flavourDir(cfg.DataDir, cfg.SF, flavour, smallFiles)
		err := ensureData(dir, progress, func(out string, _ func(done, total int64)) error {
			return writeFlavour(ctx, flavour, src, out, max(cfg.Threads, 2), smallFiles)
		})
		if err != nil {
			return nil, fmt.Errorf("cannot write the TPC-H %s flavour: %w", flavour, err)
		}
	}
	info, err := dataInfo(dir)
	if err != nil {
		return nil, err
	}
	info.Description = fmt.Sprintf("TPC-H SF %g, flavour %s: %s", cfg.SF, flavour, flavourAbout(flavour, cfg.Files, smallFiles))
	if files, err := parquetFiles(filepath.Join(dir, "lineitem")); err == nil && len(files) > 0 {
		foot, err := describeFooter(files[0])
		if err != nil {
			return nil, err
		}
		info.Description += "; lineitem " + foot
	}
	name := "tpch"
	if flavour != "lore" {
		name += "-" + flavour
	}
	s := &Suite{Name: name, Queries: qs, Data: info}
	for _, t := range tpchTables {
		s.Tables = append(s.Tables, Table{Name: t, Dir: filepath.Join(dir, t)})
	}
	if cfg.Lake != "" {
		lakeDir := dir + "-" + cfg.Lake
		err := ensureData(lakeDir, progress, func(out string, _ func(done, total int64)) error {
			return writeLakeTables(ctx, cfg.Lake, dir, out, tpchTables)
		})
		if err != nil {
			return nil, fmt.Errorf("cannot write the TPC-H %s tables: %w", cfg.Lake, err)
		}
		for i, t := range tpchTables {
			s.Tables[i].Lake, s.Tables[i].LakeDir = cfg.Lake, filepath.Join(lakeDir, t)
		}
		s.Data.Description += map[string]string{
			"delta":   ", Lore reading them as Delta tables (one commit with per-file stats)",
			"iceberg": ", Lore reading them as Iceberg tables (one snapshot, one manifest with per-file stats)",
		}[cfg.Lake]
	}
	return s, nil
}
