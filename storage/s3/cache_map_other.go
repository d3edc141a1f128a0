//go:build !unix

package s3

import (
	"io"
	"os"
)

// mapped reads the first n bytes of f, where files cannot be mapped.
func mapped(f *os.File, n int) ([]byte, func(), error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}
