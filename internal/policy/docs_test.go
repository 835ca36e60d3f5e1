package policy

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"testing"
)

// TestFieldTableExact: docs/security.md's table of what a rule sees
// names exactly the fields of Agent.
func TestFieldTableExact(t *testing.T) {
	raw, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile("(?s)### The `agent` a rule sees\n(.*?)\n\n").FindSubmatch(raw)
	if section == nil {
		t.Fatal("docs/security.md has no field table")
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllSubmatch(section[1], -1) {
		documented = append(documented, string(m[1]))
	}
	var fields []string
	for f := range reflect.TypeFor[Agent]().Fields() {
		if tag := f.Tag.Get("cel"); tag != "" {
			fields = append(fields, tag)
		}
	}
	slices.Sort(documented)
	slices.Sort(fields)
	if !slices.Equal(documented, fields) {
		t.Errorf("documented fields %v, Agent has %v", documented, fields)
	}
}
