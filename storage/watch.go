package storage

import "strings"

// Watcher is a store that can tell that nothing under a location changed since a
// moment, without listing it again: the kernel reports every change to the
// directories it watches. A caller takes a Stamp before it reads a location; while a
// later stamp is UnchangedSince it, what it read then is what it would read now.
type Watcher interface {
	// Watch starts watching location (a file, a directory with everything under
	// it, or a glob's base directory) if it is not yet watched, and returns a stamp
	// of this moment. ok is false when changes to the location cannot be seen: a
	// file system whose changes the kernel does not report (network and FUSE file
	// systems), a symbolic link inside the tree (its target changes unseen), too
	// many directories, or a platform without notifications.
	Watch(location string) (s Stamp, ok bool)
}

// Watch is w.Watch when store s (or the store a Router sends location to) is a
// Watcher; ok is false otherwise.
func Watch(s Store, location string) (Stamp, bool) {
	if w, ok := StoreFor(s, location).(Watcher); ok {
		return w.Watch(location)
	}
	return Stamp{}, false
}

// Stamp is a moment in the watch of one location. The zero Stamp is always changed.
type Stamp struct {
	root *watchRoot
	seq  uint64
}

// UnchangedSince reports whether nothing under the location changed between old and
// s, a stamp of the same location that Watch took after it. Every change made before
// Watch took s is seen: the kernel queues a change's notification before the call
// that made it returns, and Watch reads the queue (and checks that the location's
// path still names what was walked), so this asks the system nothing more.
func (s Stamp) UnchangedSince(old Stamp) bool {
	if s.root == nil || old.root != s.root {
		return false
	}
	return unchangedSince(old)
}

// GlobBase splits a location with glob characters (* ? [) in a segment into the
// directory before the first such segment and the pattern's segments after it;
// pattern is nil for a location without one.
func GlobBase(location string) (base string, pattern []string) {
	loc := strings.TrimSuffix(location, "/")
	if loc == "" {
		loc = location
	}
	if !HasGlob(loc) {
		return loc, nil
	}
	segs := strings.Split(loc, "/")
	k := 0
	for k < len(segs) && !HasGlob(segs[k]) {
		k++
	}
	base = strings.Join(segs[:k], "/")
	switch {
	case base == "" && k > 0:
		base = "/"
	case base == "":
		base = "."
	}
	// Listed paths come back cleaned ("./data/x" as "data/x"): so must the base
	// they are matched under.
	return Clean(base), segs[k:]
}

// HasGlob reports whether s holds a glob character.
func HasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }
