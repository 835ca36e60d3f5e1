//go:build !linux

package catalog

import "time"

// cpuTime is unknown here: benchmarks report zero.
func cpuTime() time.Duration { return 0 }
