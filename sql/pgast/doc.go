// Package pgast holds the parse trees of PostgreSQL's grammar as pg_query emits
// them: a plain Go struct for every message of pg_query's parse and scan results,
// with the names, fields, getters, oneof wrappers and enum constants of
// pg_query_go's generated types, so that code written against those reads the same.
//
// The types carry nothing of the protobuf runtime. pg_query_go's own types register
// the descriptors of all their messages when a process starts, before main runs,
// which every `lore sql` process paid whether it parsed anything or not; these are
// generated from those descriptors once (../pgtree/gen.go), and package pgtree
// decodes, encodes, walks and copies them.
package pgast
