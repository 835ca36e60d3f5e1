package docs_test

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/a2aregistry/registry/"

// archRow matches a row of architecture.md's package table: the package,
// what it owns, and the packages of ours it imports.
var archRow = regexp.MustCompile("^\\| `([a-z0-9/._-]+)` \\|.*\\|([^|]*)\\|\\s*$")

// TestArchitectureIsTrueToTheTree holds architecture.md's package table to
// the code: imports point down the table, never up, and every package of
// ours a listed package imports is named in its row. A new import that
// breaks the shape, or a row left behind by a change, fails here rather
// than misleading the next reader.
func TestArchitectureIsTrueToTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	f, err := os.Open("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var order []string
	named := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := archRow.FindStringSubmatch(sc.Text()); m != nil && named[m[1]] == "" {
			order = append(order, m[1])
			named[m[1]] = m[2]
		}
	}
	if len(order) < 20 {
		t.Fatalf("found %d rows in architecture.md's package table; has its format changed?", len(order))
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		at := slices.Index(order, pkg)
		if at < 0 {
			continue // test helpers and sub-packages, named in their parent's row
		}
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if i := slices.Index(order, dep); i >= 0 && i <= at {
				t.Errorf("%s imports %s, which architecture.md lists above it: imports must point down the table", pkg, dep)
			}
			if named[pkg] == " everything below " {
				continue
			}
			short := dep[strings.LastIndex(dep, "/")+1:]
			if !regexp.MustCompile(`(^|[\s,(` + "`" + `/])` + regexp.QuoteMeta(short) + `([\s,)` + "`" + `]|$)`).MatchString(named[pkg]) {
				t.Errorf("%s imports %s, which its row in architecture.md does not name (it says %q)", pkg, dep, strings.TrimSpace(named[pkg]))
			}
		}
	}
}
