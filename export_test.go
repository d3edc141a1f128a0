package lore

import "github.com/loredb/lore/storage"

// SetStore replaces the engine's object store (tests observe reads through it); what
// was read through the old one is forgotten.
func SetStore(e *Engine, s storage.Store) {
	e.store = s
	e.listings.clear()
}

// SetAnalyzeHook sets the function ANALYZE calls between its work and its final
// check of the source version; nil removes it.
func SetAnalyzeHook(f func(table string)) { analyzeHook = f }

// WaitForRefreshes blocks until no background statistics refresh is running.
func WaitForRefreshes(e *Engine) { e.refresh.wait() }

// BudgetUsed is the memory the engine's statements hold now.
func BudgetUsed(e *Engine) int64 { return e.budget.Used() }

// SetOptimizeHook sets the function OPTIMIZE calls after each batch it writes; nil
// removes it.
func SetOptimizeHook(f func()) { optimizeHook = f }

// SetBoundsIndexMinFiles sets the fewest files for which a scan asks the catalog's
// bounds index, and returns the setting it replaced.
func SetBoundsIndexMinFiles(n int64) int64 { return boundsIndexMinFiles.Swap(n) }
