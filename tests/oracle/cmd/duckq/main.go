// Command duckq runs SQL statements (one per argument) through the oracle's DuckDB
// translation and rendering, to check what an expectation should be:
//
//	go run ./cmd/duckq "SELECT 1/0" "SELECT * FROM '__TESTDATA__/multi'"
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loredb/lore/tests/oracle"
)

func main() {
	ctx := context.Background()
	db, err := oracle.Open(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	td, _ := filepath.Abs("../testdata")
	for _, q := range os.Args[1:] {
		tq, err := oracle.Translate(q, td)
		if err != nil {
			fmt.Println("translate:", err)
			continue
		}
		fmt.Println(">", tq)
		types, rows, err := db.Query(ctx, tq)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(types)
		for _, r := range rows {
			fmt.Println(strings.Join(r, "\t"))
		}
	}
}
