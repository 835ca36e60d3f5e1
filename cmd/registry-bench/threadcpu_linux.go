package main

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID (clock_gettime(2)).
const clockThreadCPUTime = 3

// preciseThreadCPU is the CPU time of the calling OS thread to the
// nanosecond; getrusage's figure (threadCPU) moves in scheduler ticks,
// too coarse for a request of a millisecond.
func preciseThreadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
