package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// TestTruncatedIsShown: a run or check whose stored record was cut to fit
// its bound says so, and one that was not cut says nothing.
func TestTruncatedIsShown(t *testing.T) {
	for _, cut := range []bool{false, true} {
		run := newRunResponse(catalog.Run{ID: "r"}, proxy.Transcript{Truncated: cut})
		check := newCheckResponse(catalog.Run{ID: "c"}, proxy.CheckRecord{Truncated: cut})
		for name, v := range map[string]any{"run": run, "check": check} {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), `"truncated":true`); got != cut {
				t.Errorf("%s cut=%v: body %s", name, cut, b)
			}
		}
	}
}
