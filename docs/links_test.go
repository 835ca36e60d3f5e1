// Package docs_test checks the documentation the way a reader meets it:
// every relative link in README.md, BENCHMARKS.md and docs/*.md must lead
// to a file of the repository and, when it names a heading, to a heading
// that exists. The pages link to one another heavily; a renamed section
// or a moved page would otherwise leave dead links nobody notices.
package docs_test

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// pages are the Markdown files whose links are checked, relative to this
// directory.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md", "../BENCHMARKS.md"}, docs...)
}

var (
	// link matches an inline link or image, [text](target) with an
	// optional "title"; reference-style links are not used here.
	link = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpan is an inline code span, whose brackets are not links.
	codeSpan = regexp.MustCompile("`[^`]*`")
	heading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// parsed is what the checker needs of one Markdown file.
type parsed struct {
	links   []string
	anchors map[string]bool
}

// parse reads the links and heading anchors of a Markdown file, outside
// fenced code blocks.
func parse(path string) (parsed, error) {
	f, err := os.Open(path)
	if err != nil {
		return parsed{}, err
	}
	defer f.Close()
	p := parsed{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			// GitHub numbers repeated headings: x, x-1, x-2, …
			a := anchor(m[1])
			if n := seen[a]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				p.anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, "code"), -1) {
			p.links = append(p.links, m[1])
		}
	}
	return p, sc.Err()
}

// anchor is the fragment GitHub gives a heading: lower case, inline
// markup and punctuation dropped, spaces turned into hyphens.
func anchor(text string) string {
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestAnchor(t *testing.T) {
	tests := map[string]string{
		"Quick start": "quick-start",
		"`registry verify`: one card, from the command line": "registry-verify-one-card-from-the-command-line",
		"Docker, Compose and Kubernetes":                     "docker-compose-and-kubernetes",
		"ARD (planned)":                                      "ard-planned",
		"Sign-in, roles and tokens":                          "sign-in-roles-and-tokens",
		"Search index size: 100,000 and 300,000 agents":      "search-index-size-100000-and-300000-agents",
		"Content scan: hostile card text":                    "content-scan-hostile-card-text",
		"What's next — and why":                              "whats-next--and-why",
	}
	for text, want := range tests {
		if got := anchor(text); got != want {
			t.Errorf("anchor(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestRelativeLinksResolve follows every relative link of every page.
func TestRelativeLinksResolve(t *testing.T) {
	cache := map[string]parsed{}
	read := func(path string) (parsed, error) {
		if p, ok := cache[path]; ok {
			return p, nil
		}
		p, err := parse(path)
		if err == nil {
			cache[path] = p
		}
		return p, err
	}
	checked := 0
	for _, page := range pages(t) {
		p, err := read(page)
		if err != nil {
			t.Fatalf("reading %s: %v", page, err)
		}
		for _, target := range p.links {
			u, err := url.Parse(target)
			if err != nil {
				t.Errorf("%s: link %q does not parse: %v", page, target, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // outside the repository: not ours to check offline
			}
			checked++
			dest := page
			if u.Path != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(u.Path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file %s", page, target, dest)
					continue
				}
			}
			if u.Fragment == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: link %q names a heading of a file that is not Markdown", page, target)
				continue
			}
			d, err := read(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
				continue
			}
			if !d.anchors[u.Fragment] {
				t.Errorf("%s: link %q: %s has no heading #%s", page, target, dest, u.Fragment)
			}
		}
	}
	// The pages link to one another; finding none means the parser broke.
	if checked < 50 {
		t.Errorf("only %d relative links found; the link parser is broken", checked)
	}
}
