// Package flight is Lore's Arrow Flight SQL endpoint (docs/server.md, "Flight SQL"):
// the standard protocol of columnar clients (ADBC, JDBC/ODBC Flight SQL drivers,
// arrow-go's flightsql.Client) over one lore.Engine, on its own gRPC port beside the
// HTTP API.
//
// A call is authenticated by the HTTP server's bearer tokens (server.TokenStore),
// read from the "authorization: Bearer <token>" metadata by a gRPC interceptor, and
// every statement runs as the token's principal (lore.WithPrincipal), so the engine
// enforces roles exactly as it does for HTTP. Every Lore error code maps to one gRPC
// code in one table (grpcCodes); the message is "CODE: message" and an ErrorInfo
// detail carries the code, the position and the query id.
//
// A statement runs at GetFlightInfo, not at DoGet: Lore knows a result's schema only
// by running the statement, and the FlightInfo must carry it. The result then waits
// under a one-shot ticket (its handle is the statement's query id) until DoGet
// fetches it or Options.TicketTTL passes, whichever comes first; at most
// Options.MaxTickets results wait at once. DoGet streams the batches through an
// iterator (batchIter), so a streaming engine result can replace the materialised
// one without changing the stream. The last FlightData of a result carries the query
// record's JSON as its app_metadata.
//
// Prepared statements keep their text only: Lore binds no parameters, and plans no
// schema without running, so they are statements run again at each execution.
package flight
