// Package enginetest tests the lore engine submitting its distributed work through
// lore-beam: ANALYZE under execution = 'beam', and lore analyze --runner. The engine
// parses SQL (cgo), so its tests build only with cgo; the test binary is lore-beam
// too, started by the engine as its lore-beam command.
package enginetest
