package sql

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestParseCacheShares parses a query twice: the second parse comes from the cache,
// is the same tree, shared (no copy), and a change to it is caught by
// CheckUnchanged. Texts with other statements are not cached, and the cache stays
// bounded.
func TestParseCacheShares(t *testing.T) {
	const text = "SELECT a, count(*) FROM 'data/*.parquet' WHERE b > 3 GROUP BY a; SELECT 1"
	first, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := recent.get(text); !ok {
		t.Fatal("a text of queries was not cached")
	}
	second, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	q1, q2 := first[0].(*Query), second[0].(*Query)
	if !reflect.DeepEqual(q1.Select, q2.Select) || q1.Text != q2.Text || len(q1.Paths) != len(q2.Paths) || len(q1.Paths) != 1 {
		t.Fatalf("cached parse differs: %v / %v", q1, q2)
	}
	if q1 == q2 || q1.Select != q2.Select {
		t.Fatal("each caller should get its own Query sharing one tree")
	}
	q2.CheckUnchanged() // unchanged: no panic
	where := q2.Select.WhereClause
	q2.Select.WhereClause = nil
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a change to a shared tree was not caught")
			}
		}()
		q2.CheckUnchanged()
	}()
	q2.Select.WhereClause = where
	if _, err := Parse("SET SESSION use_statistics = false"); err != nil {
		t.Fatal(err)
	}
	if _, ok := recent.get("SET SESSION use_statistics = false"); ok {
		t.Error("a SET statement was cached")
	}
	for i := 0; i < parseCacheSize+10; i++ {
		if _, err := Parse(fmt.Sprintf("SELECT %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	recent.mu.Lock()
	n := len(recent.m)
	recent.mu.Unlock()
	if n > parseCacheSize {
		t.Errorf("%d texts cached, the bound is %d", n, parseCacheSize)
	}
}

// TestParseAhead parses texts ahead: a query's parse lands in the cache, a Parse
// made while a parse ahead runs waits for it and takes its tree, and a text with a
// syntax error or another kind of statement leaves nothing behind, its Parse
// reporting what it reports without the parse ahead.
func TestParseAhead(t *testing.T) {
	pending := func(text string) (cached, parsing bool) {
		recent.mu.Lock()
		defer recent.mu.Unlock()
		return recent.m[text] != nil, recent.ahead[text] != nil
	}
	const alone = "SELECT k FROM t WHERE k = 'parsed ahead, alone'"
	ParseAhead(alone)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, parsing := pending(alone); !parsing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the parse ahead never finished")
		}
	}
	if cached, _ := pending(alone); !cached {
		t.Fatal("a query parsed ahead was not cached")
	}

	const text = "SELECT k, sum(v) FROM t WHERE k > 'parsed ahead, raced' GROUP BY k"
	ParseAhead(text)
	ParseAhead(text) // one parse at a time for one text
	sts, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if cached, parsing := pending(text); !cached || parsing {
		t.Fatalf("after Parse: cached %v, still parsing ahead %v", cached, parsing)
	}
	if q := sts[0].(*Query); q.Text != text || q.Select == nil {
		t.Fatalf("Parse after a parse ahead: %+v", q)
	}

	for _, bad := range []string{"SELECT FROM WHERE parse_ahead", "SET SESSION use_statistics = false"} {
		_, want := parse(bad)
		ParseAhead(bad)
		_, got := Parse(bad)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: Parse after a parse ahead says %v, without one %v", bad, got, want)
		}
		if cached, _ := pending(bad); cached {
			t.Errorf("%q was cached", bad)
		}
	}
}
