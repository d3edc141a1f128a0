// Package ahead starts what a `lore sql` command will need while the Go runtime is
// still initialising the program: its catalog's open (catalog.OpenAhead), the
// parse of its first request (sql.ParseAhead), the reading of the memory it may
// use (sysmem.Total) and the first draw of randomness, for its statement's record,
// on the core the runtime leaves idle. The lore command's main package imports it
// for this init alone; it and package cli take a command's home from package home,
// so that both find the same catalog.
//
// Go initialises a package once its dependencies are, taking the ready packages in
// import path order. This one depends on the catalog, the parser and the script
// splitter, which arrow's compute registry, gRPC and the protocol buffer
// registrations do not, so it runs before them: the millisecond or two they take on
// one core is the time the catalog takes to open on the other.
//
// It reads the command line as package flag would for `lore sql` and does nothing
// unless it is sure of what it read: another command, a flag it does not know, a
// statement sent to a server. A wrong guess would cost only the work done ahead.
package ahead

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/internal/home"
	"github.com/loredb/lore/internal/script"
	"github.com/loredb/lore/internal/sysmem"
	"github.com/loredb/lore/sql"
)

func init() {
	dir, text, ok := SQLArgs(os.Args[1:])
	if !ok {
		return
	}
	// Started in the order the command will need them: the memory limit and the
	// catalog as the engine opens, the parse as the statement starts. The runtime
	// runs the goroutines a busy core leaves behind in about that order.
	go sysmem.Total()
	catalog.OpenAhead(filepath.Join(home.Dir(dir), "catalog.db"))
	if reqs := script.Requests(text, script.Statements(text)); len(reqs) > 0 {
		sql.ParseAhead(text[reqs[0].Start:reqs[0].End])
	}
	// The first read maps the generator's state: the twentieth of a millisecond
	// it takes would otherwise fall to the statement's record ID.
	go rand.Read(make([]byte, 1))
}

// sqlFlags are the flags of `lore sql`, each with whether it takes a value.
var sqlFlags = map[string]bool{
	"home": true, "memory-limit": true, "c": true, "f": true, "format": true,
	"set": true, "server": true, "token": true, "timer": false,
}

// SQLFlag reports whether `lore sql` has the flag name and whether the flag takes
// a value (is not boolean).
func SQLFlag(name string) (known, value bool) {
	value, known = sqlFlags[name]
	return known, value
}

// SQLArgs reads args, a command line without the program's name, as `lore sql`
// will: its --home flag's value ("" when not given) and its -c flag's text, and
// whether the command runs statements here. It reports false for another command,
// a statement sent to a server (--server), and a command line it cannot be sure of
// (a flag it does not know, a flag without its value).
func SQLArgs(args []string) (home, text string, ok bool) {
	if len(args) == 0 || args[0] != "sql" {
		return "", "", false
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break // the flags end: package flag reads no further
		}
		name, val, inline := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		known, takesValue := SQLFlag(name)
		switch {
		case !known || name == "" || name[0] == '-' || name[0] == '=':
			return "", "", false
		case !takesValue:
			continue
		case !inline:
			if i+1 >= len(args) {
				return "", "", false
			}
			i++
			val = args[i]
		}
		switch name {
		case "home":
			home = val
		case "c":
			text = val
		case "server":
			return "", "", false
		}
	}
	return home, text, true
}
