// Package cli implements the lore command line: "lore sql" (an interactive shell
// with history, or scripts from -c, -f or stdin), "lore gen", "lore demo" and
// "lore version", plus the result formatters (WriteResult) they share. Command
// main only calls Main, so every command is testable in-process.
//
// Invariants:
//   - Main never calls os.Exit and touches only the streams it is given; it returns
//     0 on success, 1 when the work failed and 2 for a bad command line.
//   - Results go to stdout and nothing else does in script mode (errors, timings
//     and progress go to stderr), so csv/json output can be piped safely.
//   - A script is sent to the engine one request at a time: each run of leading
//     SET SESSION statements travels with the statement it configures, because
//     the engine applies settings only to the statement in the same request.
//   - Errors are shown with errs.Describe against the exact text sent, so the
//     caret points into what the user wrote.
package cli
