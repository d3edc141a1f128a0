package storage

import (
	"path"
	"strings"
)

// Paths are either operating-system paths (local disk) or URLs of an object store
// (s3://bucket/key). The functions here treat both alike: a URL keeps its scheme and
// authority as they are, and only the part after them is cleaned and joined, as
// package path does for a slash-separated path (which would fold "s3://" into "s3:/").

// Scheme is the lower-cased scheme of a URL path ("s3" for s3://bucket/key), or "" for
// a local path.
func Scheme(p string) string {
	i := strings.Index(p, "://")
	if i <= 1 || strings.ContainsAny(p[:i], "/.\\") {
		return ""
	}
	return strings.ToLower(p[:i])
}

// splitURL cuts a URL path into its scheme and authority ("s3://bucket") and the rest
// ("/key"); head is "" for a local path.
func splitURL(p string) (head, rest string) {
	if Scheme(p) == "" {
		return "", p
	}
	i := strings.Index(p, "://") + 3
	if j := strings.IndexByte(p[i:], '/'); j >= 0 {
		return p[:i+j], p[i+j:]
	}
	return p, ""
}

// Clean is path.Clean that keeps a URL's scheme and authority: s3://b//x/../y is
// s3://b/y; a URL naming a bucket alone is kept without a trailing slash.
func Clean(p string) string {
	head, rest := splitURL(p)
	if head == "" {
		return path.Clean(p)
	}
	if rest == "" || rest == "/" {
		return head
	}
	return head + strings.TrimSuffix(path.Clean(rest), "/")
}

// Join is path.Join that keeps a URL's scheme and authority.
func Join(base string, elem ...string) string {
	head, rest := splitURL(base)
	if head == "" {
		return path.Join(append([]string{base}, elem...)...)
	}
	return Clean(head + path.Join(append([]string{"/", rest}, elem...)...))
}

// Dir is path.Dir that keeps a URL's scheme and authority: the directory of
// s3://b/x/y is s3://b/x, and of s3://b/x the bucket s3://b.
func Dir(p string) string {
	head, rest := splitURL(p)
	if head == "" {
		return path.Dir(p)
	}
	return Clean(head + path.Dir(rest))
}
