//go:build unix

package profile_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (user and system), for a throughput
// that does not depend on what else the machine runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
