//go:build !linux

package storage

// watchRoot is empty where the platform has no notifications Lore uses.
type watchRoot struct{}

// Watch implements Watcher: changes cannot be seen here, so nothing is watched.
func (Local) Watch(location string) (Stamp, bool) { return Stamp{}, false }

func unchangedSince(Stamp) bool { return false }
