package main

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
	"time"
)

// sampleEvery is the memory sampling period.
const sampleEvery = 10 * time.Millisecond

// Both engines run in this process, one at a time, so each run is sampled on its
// own: the Go heap in use (Lore's allocations; DuckDB allocates outside it) and the
// growth of the resident set over its size when the run started.
const memoryNote = "Lore peak heap = max Go HeapInuse (runtime/metrics: heap objects + unused bytes in in-use spans) sampled every 10 ms during Lore's runs; " +
	"RSS delta = max over an engine's runs of (peak resident set during the run − resident set at its start), from /proc/self/statm every 10 ms. " +
	"Both engines share the process: memory freed by one and kept by its allocator (Go's heap, DuckDB's allocator) is not counted again for either."

// sampler watches memory while one run is in progress.
type sampler struct {
	heap     bool
	baseRSS  int64
	peakRSS  int64
	peakHeap uint64
	quit     chan struct{}
	done     chan struct{}
	samples  []metrics.Sample
}

// startSampler starts sampling; with heap it also samples the Go heap in use.
func startSampler(heap bool) *sampler {
	s := &sampler{heap: heap, quit: make(chan struct{}), done: make(chan struct{})}
	if heap {
		s.samples = []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/unused:bytes"},
		}
	}
	s.baseRSS = rss()
	s.peakRSS = s.baseRSS
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	s.peakRSS = max(s.peakRSS, rss())
	if !s.heap {
		return
	}
	metrics.Read(s.samples)
	var inuse uint64
	for _, m := range s.samples {
		if m.Value.Kind() == metrics.KindUint64 {
			inuse += m.Value.Uint64()
		}
	}
	s.peakHeap = max(s.peakHeap, inuse)
}

// stop ends sampling (taking one last sample) and returns the peak heap in use and
// the peak growth of the resident set.
func (s *sampler) stop() (peakHeap uint64, rssDelta int64) {
	close(s.quit)
	<-s.done
	s.sample()
	return s.peakHeap, max(s.peakRSS-s.baseRSS, 0)
}

var pageSize = int64(os.Getpagesize())

// rss is the process's resident set in bytes, or 0 when /proc is unavailable.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * pageSize
}
