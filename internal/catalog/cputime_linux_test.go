package catalog

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time (user and system), which a loaded
// machine does not inflate as it does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
