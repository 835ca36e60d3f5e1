//go:build !linux

package main

import "time"

// preciseThreadCPU is not measured outside Linux: the console benchmark
// then reports a CPU time of zero.
func preciseThreadCPU() time.Duration { return 0 }
