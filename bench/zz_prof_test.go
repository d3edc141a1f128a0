package main

import (
	"context"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/loredb/lore"
	"github.com/loredb/lore/storage/s3/s3test"
)

func TestZZProf(t *testing.T) {
	ctx := context.Background()
	srv, err := s3test.Serve("bkt")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tables := strings.Split(os.Getenv("TABLES"), ",")
	for _, tb := range tables {
		srv.Store().PutDir(ctx, "data/tpch-sf1-4/"+tb, "s3://bkt/"+tb)
	}
	cfg := srv.Config()
	open := func(prefix string, cache int64) *lore.Engine {
		eng, _ := lore.Open(ctx, lore.Options{Home: t.TempDir(), S3: &cfg, Threads: 2, CacheBytes: cache})
		for _, tb := range tables {
			if _, err := eng.Query(ctx, "CREATE TABLE "+tb+" WITH (location = '"+prefix+tb+"', format = 'parquet')", nil); err != nil {
				t.Fatal(err)
			}
		}
		return eng
	}
	q, _ := os.ReadFile("queries/tpch/" + os.Getenv("Q") + ".sql")
	set := map[string]string{"use_statistics": "false", "result_cache": "false"}
	for _, side := range []struct{ name, prefix string }{{"s3", "s3://bkt/"}, {"local", "data/tpch-sf1-4/"}} {
		eng := open(side.prefix, 8<<30)
		eng.Query(ctx, string(q), set)
		f, _ := os.Create("/tmp/prof-" + side.name + ".out")
		pprof.StartCPUProfile(f)
		start := time.Now()
		for range 10 {
			if _, err := eng.Query(ctx, string(q), set); err != nil {
				t.Fatal(err)
			}
		}
		pprof.StopCPUProfile()
		f.Close()
		t.Logf("%s: %v per run", side.name, time.Since(start)/10)
	}
}
