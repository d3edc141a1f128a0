package s3

import "syscall"

// mapPopulate asks Linux to map every page of a cache hit at once: the whole range
// is read (its checksum first), and one call costs less than a fault per page.
const mapPopulate = syscall.MAP_POPULATE
