package catalog

import (
	"context"
	"path/filepath"
	"sync"
)

// ahead is the catalog OpenAhead opens, for Open to take.
var ahead struct {
	mu   sync.Mutex
	abs  string        // its absolute path; "" once taken
	done chan struct{} // closed when the open has ended; nil before OpenAhead
	c    *Catalog      // nil when it could not be opened reader first
}

// OpenAhead starts opening the catalog at path in the background, for a process
// that will Open the same path soon and has a core idle until then: `lore sql`
// calls it while the Go runtime initialises the program's packages, which takes a
// millisecond or two on one core, and the open — the first connection, the
// write-ahead log's replay, the schema's parse, the checks — takes about as long on
// the other. The open also prepares the statement that looks a table up, the first
// thing a statement asks of the catalog.
//
// Only a catalog that opens by reading alone is opened ahead: an existing, current,
// writable one (openCurrent). It takes no lock and writes nothing a reader would
// not. Open then takes it, waiting for the open to end if need be; when the open
// failed, or Open is given another path, Open opens the catalog itself as ever. A
// catalog opened ahead and never taken stays open until the process ends. Only
// the first call does anything.
func OpenAhead(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	ahead.mu.Lock()
	defer ahead.mu.Unlock()
	if ahead.done != nil {
		return
	}
	ahead.abs, ahead.done = abs, make(chan struct{})
	go func() {
		defer close(ahead.done)
		ctx := context.Background()
		c := openCurrent(ctx, path, abs, migrations)
		if c != nil {
			c.prepare(ctx, lookupQuery)
			// The writer too: connected beside a statement, it took a core from the
			// statement's listing and statistics read.
			c.ConnectWriter()
		}
		ahead.c = c
	}()
}

// takeAhead returns the catalog OpenAhead opened at path, once, or nil.
// Without one waiting, it costs Open no path resolution.
func takeAhead(path string) *Catalog {
	ahead.mu.Lock()
	waiting := ahead.abs
	ahead.mu.Unlock()
	if waiting == "" {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	ahead.mu.Lock()
	done, mine := ahead.done, ahead.abs != "" && ahead.abs == abs
	if mine {
		ahead.abs = ""
	}
	ahead.mu.Unlock()
	if !mine {
		return nil
	}
	<-done
	c := ahead.c
	ahead.c = nil
	if c != nil {
		c.path = path
	}
	return c
}
