// Package server is Lore's HTTP API (SPEC §9; docs/server.md): it authenticates a
// request by bearer token, runs its statement through lore.Engine as the token's
// principal (so the engine enforces roles), and encodes the result as lossless typed
// JSON, NDJSON, CSV or an Arrow IPC stream. It keeps the live state of running
// statements so that they can be listed and canceled, and answers the catalog's
// freshness questions (a table's current version, its statistics and whether they are
// stale).
//
// Every error leaves as {"error": {"code", "message", "position"?}} with the status
// errs.Status gives its code: the mapping lives in one place. Results are materialised
// before they are written (paging and streaming with bounded memory are not built yet).
package server
