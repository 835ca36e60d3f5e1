package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain lets the test binary be the mixed benchmark's search client,
// which runMixed starts as a child process of its own executable.
func TestMain(m *testing.M) {
	if os.Getenv(searchClientEnv) != "" && len(os.Args) > 1 && os.Args[1] == searchClientCmd {
		if err := runSearchClient(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "registry-bench:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(searchClientEnv) != "" && len(os.Args) > 1 && os.Args[1] == openLoopCmd {
		if err := runOpenLoopClient(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "registry-bench:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
