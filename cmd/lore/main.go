// Command lore is the Lore command line; the commands live in package cli.
package main

import (
	"os"

	"github.com/loredb/lore/cli"
	_ "github.com/loredb/lore/internal/ahead"   // lore sql's catalog and parse, started during init
	_ "github.com/loredb/lore/internal/startup" // before the packages whose init allocates
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
