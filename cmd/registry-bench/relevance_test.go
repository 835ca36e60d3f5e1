package main

import (
	"strings"
	"testing"
)

// The relevance benchmark with the fake embeddings API on a small catalog:
// it embeds every agent, scores both sets both ways, and refuses
// weights that leave nothing to fuse.
func TestRelevanceBenchmarkSmoke(t *testing.T) {
	if err := runRelevance([]string{"-n", "50", "-hybrid", "-fake-embeddings", "-embeddings-batch-size", "16", "-lexical-weight", "2"}); err != nil {
		t.Fatal(err)
	}
	err := runRelevance([]string{"-n", "0", "-hybrid", "-fake-embeddings", "-lexical-weight", "0", "-vector-weight", "0"})
	if err == nil || !strings.Contains(err.Error(), "not both 0") {
		t.Fatalf("both weights 0: err = %v", err)
	}
}
