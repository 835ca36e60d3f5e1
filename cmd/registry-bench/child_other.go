//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing outside Linux: children of a benchmark
// killed midway may outlive it there.
func dieWithParent(*exec.Cmd) {}
