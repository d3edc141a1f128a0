package pgtree

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	pgq "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pg "github.com/loredb/lore/sql/pgast"
)

// corpus is every statement of the repository's SQL test files and benchmark
// queries that PostgreSQL's parser accepts, plus statements for node kinds those
// lack.
func corpus(t *testing.T) []string {
	t.Helper()
	out := []string{
		"SELECT 1.5::float8, -2::int2, 'x'::bytea, B'101', X'1F', true, NULL, E'\\xff'",
		"SELECT * FROM t TABLESAMPLE BERNOULLI (10) REPEATABLE (1)",
		"SELECT a FROM t WHERE a IS DISTINCT FROM b AND c IS NOT TRUE AND d ILIKE 'x%' AND e SIMILAR TO 'y'",
		"SELECT ARRAY[1, 2][1], ROW(1, 2), (x).y, x[1:2] FROM t",
		"SELECT count(*) FILTER (WHERE a > 1) OVER (PARTITION BY b ORDER BY c ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
		"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t GROUP BY GROUPING SETS ((a), (b), ()), CUBE (c), ROLLUP (d)",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
		"SELECT * FROM a NATURAL FULL JOIN b, LATERAL (SELECT * FROM c WHERE c.x = a.x) l",
		"SELECT CASE WHEN a THEN 1 ELSE 2 END, COALESCE(a, b), NULLIF(a, b), GREATEST(1, 2), x BETWEEN 1 AND 2",
		"SELECT a FROM t ORDER BY a DESC NULLS FIRST LIMIT 10 OFFSET 5 FOR UPDATE",
		"INSERT INTO t (a, b) VALUES (1, 2) ON CONFLICT (a) DO UPDATE SET b = excluded.b RETURNING *",
		"UPDATE t SET a = 1 FROM u WHERE t.id = u.id",
		"DELETE FROM t USING u WHERE t.id = u.id",
		"CREATE TABLE x (a int PRIMARY KEY, b text NOT NULL DEFAULT 'q', c numeric(10, 2) CHECK (c > 0))",
		"CREATE INDEX CONCURRENTLY i ON t USING btree (a DESC) WHERE b > 0",
		"ALTER TABLE t ADD COLUMN c int, DROP COLUMN d",
		"EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1",
		"SELECT interval '1 day', timestamp '2020-01-01', date '2020-01-01' + 1, current_date, current_timestamp(3)",
		"SELECT xmlelement(name foo, 'bar'), json_object('a': 1), a->>'b' FROM t",
		"SELECT * FROM ROWS FROM (generate_series(1, 3), unnest(ARRAY[1])) WITH ORDINALITY AS g(a, b, n)",
		"SELECT a FROM t WHERE a = ANY (SELECT b FROM u) AND EXISTS (SELECT 1) AND a NOT IN (1, 2, 3)",
		"VALUES (1, 'a'), (2, 'b')",
		"SELECT 1 UNION SELECT 2 INTERSECT SELECT 3 EXCEPT ALL SELECT 4",
		"SET search_path = a, b; SHOW search_path; BEGIN; COMMIT",
	}
	root := filepath.Join("..", "..")
	var files []string
	for _, glob := range []string{"bench/queries/*/*.sql", "tests/conform/*.sql", "tests/sql/*.slt"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 100 {
		t.Fatalf("found %d SQL files; the corpus is missing", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.HasSuffix(f, ".slt") {
			text = sltStatements(text)
		}
		stmts, err := parser.SplitWithScanner(text, true)
		if err != nil {
			continue
		}
		out = append(out, stmts...)
	}
	return out
}

// sltStatements keeps the SQL of a sqllogictest file: the lines after a
// "statement" or "query" line up to a blank line or the "----" of the results.
func sltStatements(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "statement ") || strings.HasPrefix(line, "query "):
			in = true
		case line == "" || line == "----":
			if in {
				b.WriteString(";\n")
			}
			in = false
		case in:
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// sameTree reports whether ours, a pgast value, holds what theirs, the value
// pg_query_go's protobuf types hold, does: the same exported fields by name, the
// same numbers and strings, the same message kinds in oneofs, recursively.
func sameTree(ours, theirs reflect.Value) bool {
	if ours.Kind() != theirs.Kind() {
		return false
	}
	switch ours.Kind() {
	case reflect.Pointer, reflect.Interface:
		if ours.IsNil() || theirs.IsNil() {
			return ours.IsNil() == theirs.IsNil()
		}
		if ours.Kind() == reflect.Interface && ours.Elem().Type().Elem().Name() != theirs.Elem().Type().Elem().Name() {
			return false
		}
		return sameTree(ours.Elem(), theirs.Elem())
	case reflect.Struct:
		n := 0
		for i := 0; i < ours.NumField(); i++ {
			f := ours.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			tf, ok := theirs.Type().FieldByName(f.Name)
			if !ok || !sameTree(ours.Field(i), theirs.FieldByIndex(tf.Index)) {
				return false
			}
			n++
		}
		for i := 0; i < theirs.NumField(); i++ {
			if theirs.Type().Field(i).IsExported() {
				n--
			}
		}
		return n == 0
	case reflect.Slice:
		if ours.Len() != theirs.Len() {
			return false
		}
		for i := 0; i < ours.Len(); i++ {
			if !sameTree(ours.Index(i), theirs.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Int32, reflect.Int64:
		return ours.Int() == theirs.Int()
	case reflect.Uint32, reflect.Uint64:
		return ours.Uint() == theirs.Uint()
	case reflect.Float64:
		return ours.Float() == theirs.Float()
	case reflect.Bool:
		return ours.Bool() == theirs.Bool()
	case reflect.String:
		return ours.String() == theirs.String()
	}
	return false
}

func same(ours any, theirs proto.Message) bool {
	return sameTree(reflect.ValueOf(ours), reflect.ValueOf(theirs))
}

// name is the name of a message's type, the same in both packages.
func name(m any) string { return reflect.TypeOf(m).Elem().Name() }

// reflectWalk is Walk done with protobuf reflection: what the generated code
// replaces.
func reflectWalk(m protoreflect.Message, fn func(any)) {
	fn(m.Interface())
	fds := m.Descriptor().Fields()
	for i := 0; i < fds.Len(); i++ {
		fd := fds.Get(i)
		if fd.Message() == nil || !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for j := 0; j < l.Len(); j++ {
				reflectWalk(l.Get(j).Message(), fn)
			}
			continue
		}
		reflectWalk(m.Get(fd).Message(), fn)
	}
}

func TestDecodeMatchesProtobuf(t *testing.T) {
	stmts := corpus(t)
	decoded := 0
	for _, s := range stmts {
		buf, err := parser.ParseToProtobuf(s)
		if err != nil {
			continue
		}
		want := &pgq.ParseResult{}
		if err := proto.Unmarshal(buf, want); err != nil {
			// Strings that are not UTF-8 (E'\xff') are refused by protobuf; the
			// decoder keeps their bytes.
			continue
		}
		got, err := DecodeParse(buf)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if !same(got, want) {
			t.Fatalf("%q: decoded tree differs from protobuf's", s)
		}
		decoded++

		// The encoding is the parser's, byte for byte, and protobuf reads it back
		// as the same tree.
		enc := Encode(got)
		if !bytes.Equal(enc, buf) {
			t.Fatalf("%q: the encoding differs from the parser's", s)
		}
		back := &pgq.ParseResult{}
		if err := proto.Unmarshal(enc, back); err != nil || !proto.Equal(back, want) {
			t.Fatalf("%q: protobuf reads the encoding as another tree (%v)", s, err)
		}

		// Walk visits what reflection visits, in the same order.
		var viaWalk, viaReflect []any
		Walk(got, func(m any) bool { viaWalk = append(viaWalk, m); return true })
		reflectWalk(want.ProtoReflect(), func(m any) { viaReflect = append(viaReflect, m) })
		if len(viaWalk) != len(viaReflect) {
			t.Fatalf("%q: Walk visits %d messages, reflection %d", s, len(viaWalk), len(viaReflect))
		}
		for i := range viaWalk {
			if name(viaWalk[i]) != name(viaReflect[i]) || !same(viaWalk[i], viaReflect[i].(proto.Message)) {
				t.Fatalf("%q: message %d differs (%T, %T)", s, i, viaWalk[i], viaReflect[i])
			}
		}

		// Locations lists the fields named location or …_location.
		for i, m := range viaWalk {
			fds := viaReflect[i].(proto.Message).ProtoReflect().Descriptor().Fields()
			n, own := 0, false
			for i := 0; i < fds.Len(); i++ {
				name := string(fds.Get(i).Name())
				if fds.Get(i).Kind() == protoreflect.Int32Kind && (name == "location" || strings.HasSuffix(name, "_location")) {
					n++
					own = own || name == "location"
				}
			}
			gotN, gotOwn := 0, false
			Locations(m, func(isOwn bool, _ *int32) {
				gotN++
				gotOwn = gotOwn || isOwn
			})
			if gotN != n || gotOwn != own {
				t.Fatalf("%q: %T has %d location fields (own %v), Locations gave %d (own %v)", s, m, n, own, gotN, gotOwn)
			}
		}

		// Clone is equal and shares no message with the original.
		cp := Clone(got)
		if !reflect.DeepEqual(cp, got) {
			t.Fatalf("%q: clone differs", s)
		}
		orig := map[any]bool{}
		for _, m := range viaWalk {
			orig[m] = true
		}
		Walk(cp, func(m any) bool {
			if orig[m] {
				t.Fatalf("%q: clone shares a %T with the original", s, m)
			}
			return true
		})

		// The scanner's tokens too.
		sb, err := parser.ScanToProtobuf(s)
		if err != nil {
			t.Fatal(err)
		}
		wantScan := &pgq.ScanResult{}
		if err := proto.Unmarshal(sb, wantScan); err != nil {
			t.Fatal(err)
		}
		gotScan, err := DecodeScan(sb)
		if err != nil || !same(gotScan, wantScan) {
			t.Fatalf("%q: scan result differs (%v)", s, err)
		}
	}
	if decoded < 500 {
		t.Fatalf("only %d statements decoded; the corpus is too small to trust", decoded)
	}
	t.Logf("%d statements decoded", decoded)
}

// TestDecodeBrokenInput cuts and corrupts real encodings: the decoder returns an
// error or a tree, never panics.
func TestDecodeBrokenInput(t *testing.T) {
	buf, err := parser.ParseToProtobuf("SELECT a, sum(b) FROM t JOIN u ON t.x = u.y WHERE c > 1 GROUP BY a ORDER BY 2 LIMIT 3")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(buf); n++ {
		_, _ = DecodeParse(buf[:n])
		b := append([]byte(nil), buf...)
		for _, v := range []byte{0x00, 0x7f, 0x80, 0xff, b[n] ^ 0x07} {
			b[n] = v
			_, _ = DecodeParse(b)
		}
	}
	if _, err := DecodeParse([]byte{0x12, 0x05, 0x0a}); err == nil {
		t.Fatal("a truncated message decoded without error")
	}
}

func TestDecodeDepthIsBounded(t *testing.T) {
	// Each call nests a Node and a FuncCall; a decoder that starts near its
	// bound must refuse the tree rather than go past it.
	buf, err := parser.ParseToProtobuf("SELECT " + strings.Repeat("abs(", 30) + "1" + strings.Repeat(")", 30))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeParseResult(&decoder{}, buf, &pg.ParseResult{}); err != nil {
		t.Fatal(err)
	}
	if err := decodeParseResult(&decoder{depth: MaxDepth - 40}, buf, &pg.ParseResult{}); err == nil {
		t.Fatal("nesting past MaxDepth decoded without error")
	}
}
