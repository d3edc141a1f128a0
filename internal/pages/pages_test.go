package pages

import (
	"runtime/debug"
	"sync"
	"testing"
)

// Writable keeps what the memory holds, for slices of any alignment and length,
// including ones too small to ask about.
func TestWritableKeepsContents(t *testing.T) {
	for _, n := range []int{0, 1, 1000, minBytes/8 - 1, minBytes / 8, 3*minBytes/8 + 7} {
		s := make([]uint64, n)
		for i := range s {
			s[i] = uint64(i)*2654435761 + 1
		}
		for _, off := range []int{0, 1, 3} {
			if off > len(s) {
				continue
			}
			Writable(s[off:])
		}
		for i, v := range s {
			if v != uint64(i)*2654435761+1 {
				t.Fatalf("n=%d: element %d changed to %d", n, i, v)
			}
		}
	}
	// A slice of bytes starting inside a page: only whole pages are asked about.
	b := make([]byte, 2*minBytes)
	for i := range b {
		b[i] = byte(i)
	}
	Writable(b[5 : len(b)-9])
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}
	var empty []struct{}
	Writable(empty)
}

// BenchmarkFreshTable probes a fresh table's slots before writing them, as a hash
// table's resize does, with and without Writable, while another goroutine keeps a
// second core in the process. Every table is new memory from the kernel.
func BenchmarkFreshTable(b *testing.B) {
	const n = 64 << 20 / 8
	for _, ready := range []bool{false, true} {
		name := "faulted"
		if ready {
			name = "writable"
		}
		b.Run(name, func(b *testing.B) {
			var wg sync.WaitGroup
			stop := make(chan struct{})
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
				}
			})
			defer func() { close(stop); wg.Wait() }()
			b.SetBytes(n * 8)
			for range b.N {
				b.StopTimer()
				debug.FreeOSMemory()
				b.StartTimer()
				s := make([]uint64, n)
				if ready {
					Writable(s)
				}
				for i := 0; i < n; i += 512 {
					if s[i] == 0 {
						s[i] = 1
					}
				}
			}
		})
	}
}
