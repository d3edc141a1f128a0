//go:build unix && !linux

package s3

// mapPopulate is Linux's alone; elsewhere pages are mapped as they are touched.
const mapPopulate = 0
