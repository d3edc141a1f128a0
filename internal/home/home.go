// Package home names the Lore home a command or an engine uses when none is given,
// in one place for the command line, the engine's options and the work package
// ahead starts before either runs.
package home

import "os"

// Dir is the Lore home: given when not empty, else $LORE_HOME, else .lore in the
// working directory.
func Dir(given string) string {
	if given != "" {
		return given
	}
	if h := os.Getenv("LORE_HOME"); h != "" {
		return h
	}
	return ".lore"
}
