package publish

import "time"

// started is when this process loaded the package: with the pid it names a lock's
// holder unambiguously, since pids are reused.
var started = time.Now()

func processStart() string { return started.UTC().Format(time.RFC3339Nano) }
