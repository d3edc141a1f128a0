package flight

import (
	"context"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"

	"github.com/loredb/lore/catalog"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// Lore has one namespace of tables: no catalogs and no schemas. GetCatalogs and
// GetDbSchemas answer with no rows and GetTables with null catalog and schema names,
// so that a client tool writes a table's bare name (a made-up "lore"."main" prefix
// would be a name Lore does not resolve).

// tableType is the one table type: every registered table is a TABLE.
const tableType = "TABLE"

// metadataInfo is the FlightInfo of a metadata command: its fixed schema, and the
// command itself as the ticket, so that DoGet answers it afresh.
func (s *Server) metadataInfo(desc *flight.FlightDescriptor, schema *arrow.Schema) *flight.FlightInfo {
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.mem),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: desc.Cmd}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
}

// one streams a single batch built by fill.
func (s *Server) one(ctx context.Context, schema *arrow.Schema, fill func(*array.RecordBuilder) error) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	if err := fill(b); err != nil {
		return nil, nil, statusError(err, "")
	}
	rec := b.NewRecordBatch()
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return schema, ch, nil
}

func noRows(*array.RecordBuilder) error { return nil }

// GetFlightInfoCatalogs answers the catalogs command: none (see above).
func (s *Server) GetFlightInfoCatalogs(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metadataInfo(desc, schema_ref.Catalogs), nil
}

// DoGetCatalogs streams no catalog.
func (s *Server) DoGetCatalogs(ctx context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.one(ctx, schema_ref.Catalogs, noRows)
}

// GetFlightInfoSchemas answers the schemas command: none (see above).
func (s *Server) GetFlightInfoSchemas(ctx context.Context, _ flightsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metadataInfo(desc, schema_ref.DBSchemas), nil
}

// DoGetDBSchemas streams no schema.
func (s *Server) DoGetDBSchemas(ctx context.Context, _ flightsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.one(ctx, schema_ref.DBSchemas, noRows)
}

// GetFlightInfoTableTypes answers the table types command.
func (s *Server) GetFlightInfoTableTypes(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metadataInfo(desc, schema_ref.TableTypes), nil
}

// DoGetTableTypes streams the one table type.
func (s *Server) DoGetTableTypes(ctx context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.one(ctx, schema_ref.TableTypes, func(b *array.RecordBuilder) error {
		b.Field(0).(*array.StringBuilder).Append(tableType)
		return nil
	})
}

func tablesSchema(cmd flightsql.GetTables) *arrow.Schema {
	if cmd.GetIncludeSchema() {
		return schema_ref.TablesWithIncludedSchema
	}
	return schema_ref.Tables
}

// GetFlightInfoTables answers the tables command.
func (s *Server) GetFlightInfoTables(ctx context.Context, cmd flightsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metadataInfo(desc, tablesSchema(cmd)), nil
}

// DoGetTables streams the registered tables from the catalog alone, as GET
// /v1/catalog/tables does (no source is read), filtered as the command asks; with
// include_schema, each table's Arrow schema from its catalog columns.
func (s *Server) DoGetTables(ctx context.Context, cmd flightsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	if _, err := principal(ctx); err != nil {
		return nil, nil, err
	}
	ts, err := s.opts.Engine.Catalog().Tables(ctx)
	if err != nil {
		return nil, nil, statusError(err, "")
	}
	want := tableFilter(cmd)
	return s.one(ctx, tablesSchema(cmd), func(b *array.RecordBuilder) error {
		for _, t := range ts {
			if want(t.Name) {
				if err := appendTable(s, b, t, cmd.GetIncludeSchema()); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func appendTable(s *Server, b *array.RecordBuilder, t catalog.Table, withSchema bool) error {
	b.Field(0).AppendNull()
	b.Field(1).AppendNull()
	b.Field(2).(*array.StringBuilder).Append(t.Name)
	b.Field(3).(*array.StringBuilder).Append(tableType)
	if !withSchema {
		return nil
	}
	fields := make([]arrow.Field, len(t.Columns))
	for i, c := range t.Columns {
		dt, err := types.Parse(c.Type)
		if err != nil {
			return errs.New(errs.Internal, "table %s, column %s: catalog type %q: %w", t.Name, c.Name, c.Type, err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: true}
	}
	b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(arrow.NewSchema(fields, nil), s.mem))
	return nil
}

// tableFilter is whether a table of that name passes the command's filters. The
// catalog and schema of every table are null, so a catalog filter passes only "" and
// a schema pattern only when it matches "".
func tableFilter(cmd flightsql.GetTables) func(string) bool {
	if c := cmd.GetCatalog(); c != nil && *c != "" {
		return func(string) bool { return false }
	}
	if p := cmd.GetDBSchemaFilterPattern(); p != nil && !likeMatcher(*p)("") {
		return func(string) bool { return false }
	}
	if tt := cmd.GetTableTypes(); len(tt) > 0 && !containsFold(tt, tableType) {
		return func(string) bool { return false }
	}
	if p := cmd.GetTableNameFilterPattern(); p != nil {
		return likeMatcher(*p)
	}
	return func(string) bool { return true }
}

func containsFold(xs []string, s string) bool {
	for _, x := range xs {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// likeMatcher matches a Flight SQL filter pattern: % any run, _ any one character,
// a backslash escapes the next character.
func likeMatcher(pattern string) func(string) bool {
	var re strings.Builder
	re.WriteString("^")
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '\\' && i+1 < len(rs):
			i++
			re.WriteString(regexp.QuoteMeta(string(rs[i])))
		case c == '%':
			re.WriteString("(?s:.*)")
		case c == '_':
			re.WriteString("(?s:.)")
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString("$")
	m := regexp.MustCompile(re.String())
	return m.MatchString
}

// registerSQLInfo registers what GetSqlInfo answers: who the server is and what of
// SQL it supports, as far as client tools ask before they send statements.
func (s *Server) registerSQLInfo() error {
	info := map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:         "Lore",
		flightsql.SqlInfoFlightSqlServerVersion:      s.opts.Version,
		flightsql.SqlInfoFlightSqlServerArrowVersion: arrowVersion(),
		// Not read-only: an admin's token may CREATE, DROP, ALTER and ANALYZE; a
		// reader's is refused them (PermissionDenied).
		flightsql.SqlInfoFlightSqlServerReadOnly:      false,
		flightsql.SqlInfoFlightSqlServerSql:           true,
		flightsql.SqlInfoFlightSqlServerSubstrait:     false,
		flightsql.SqlInfoFlightSqlServerTransaction:   int32(flightsql.SqlTransactionNone),
		flightsql.SqlInfoFlightSqlServerCancel:        false,
		flightsql.SqlInfoFlightSqlServerBulkIngestion: false,
		flightsql.SqlInfoTransactionsSupported:        false,
		flightsql.SqlInfoDDLCatalog:                   false,
		flightsql.SqlInfoDDLSchema:                    false,
		flightsql.SqlInfoDDLTable:                     true,
		flightsql.SqlInfoIdentifierQuoteChar:          `"`,
		// Unquoted names fold to lower case. Quoted names keep their case, which the
		// protocol's enum has no value for, so the quoted case is not registered.
		flightsql.SqlInfoIdentifierCase:          int32(flightsql.SqlCaseSensitivityLowerCase),
		flightsql.SqlInfoAllTablesAreASelectable: true,
		flightsql.SqlInfoMaxStatementLen:         int64(s.opts.MaxStatementBytes),
		flightsql.SqlInfoMaxStatements:           int64(1),
	}
	for id, v := range info {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return err
		}
	}
	return nil
}

// arrowVersion is the arrow-go module the binary was built with.
func arrowVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/apache/arrow-go/v18" {
				return strings.TrimPrefix(d.Version, "v")
			}
		}
	}
	return "18"
}
