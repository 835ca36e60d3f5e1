package crawler

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLoadSeeds(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		want     []string
		badLines []int // lines reported as bad; nil: no error
	}{
		{
			name: "comments, blanks, dedupe",
			content: "# fleet\n\nhttps://a.example\n  https://b.example/.well-known/agent-card.json  # b's card\n" +
				"https://A.example:443/\n\thttps://b.example/.well-known/agent-card.json#frag\nhttps://c.example/card.json\r\n",
			want: []string{"https://a.example", "https://b.example/.well-known/agent-card.json", "https://c.example/card.json"},
		},
		{
			name: "one entry per canonical card URL",
			content: "https://hub.example/agents/a/card.json\nhttps://hub.example//agents/./a/%63ard.json?\n" +
				"https://hub.example/agents/b/card.json\nhttps://bücher.example/card.json\nhttps://b%C3%BCcher.example./card.json\n",
			want: []string{"https://hub.example/agents/a/card.json", "https://hub.example/agents/b/card.json", "https://bücher.example/card.json"},
		},
		{name: "empty file", content: "# nothing yet\n", want: nil},
		{
			name:     "every bad line is reported with its number",
			content:  "https://ok.example\nftp://bad.example\n\nhttps://user:pw@x.example/\n",
			badLines: []int{2, 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "seeds.txt")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadSeeds(path)
			if lines := seedErrorLines(t, err, path); !slices.Equal(lines, tt.badLines) {
				t.Errorf("bad lines %v, want %v (err %v)", lines, tt.badLines, err)
			}
			if tt.badLines != nil {
				if !errors.Is(err, ErrInvalidSeeds) || !errors.Is(err, ErrInvalidURL) {
					t.Errorf("err = %v, want ErrInvalidSeeds and ErrInvalidURL", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := LoadSeeds(filepath.Join(t.TempDir(), "missing.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// seedErrorLines lists the line numbers of every *SeedLineError in err's
// tree, checking each names path and wraps ErrInvalidURL.
func seedErrorLines(t *testing.T, err error, path string) []int {
	t.Helper()
	var lines []int
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case *SeedLineError:
			if e.Path != path || !errors.Is(e, ErrInvalidURL) {
				t.Errorf("line error %+v: want path %s and ErrInvalidURL", e, path)
			}
			lines = append(lines, e.Line)
		case interface{ Unwrap() []error }:
			for _, e := range e.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return lines
}

func TestSeedFileChanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seeds.txt")
	write := func(s string) {
		t.Helper()
		// Write then rename, as editors do, so the watcher never reads a
		// half-written file.
		tmp := filepath.Join(dir, "tmp")
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("https://a.example\n")
	f, first, err := OpenSeedFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://a.example"}; !slices.Equal(first, want) {
		t.Fatalf("first list %q, want %q", first, want)
	}

	ab := []string{"https://a.example", "https://b.example"}
	steps := []struct {
		desc        string
		write       string // "": leave the file alone; "-": delete it
		want        []string
		wantChanged bool
		wantErr     error
	}{
		{desc: "untouched", wantChanged: false},
		{desc: "an entry added", write: "https://a.example\nhttps://b.example\n", want: ab, wantChanged: true},
		{desc: "invalid: last list stays", write: "https://a.example\nnot a url\n", wantErr: ErrInvalidSeeds},
		{desc: "still invalid", wantChanged: false},
		{desc: "deleted", write: "-", wantErr: os.ErrNotExist},
		{desc: "same list, different bytes", write: "# same list, different bytes\nhttps://a.example\nhttps://b.example\n", want: ab, wantChanged: true},
		{desc: "same bytes rewritten", write: "# same list, different bytes\nhttps://a.example\nhttps://b.example\n", wantChanged: false},
	}
	for _, st := range steps {
		switch st.write {
		case "":
		case "-":
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		default:
			write(st.write)
		}
		got, changed, err := f.Changed()
		if !errors.Is(err, st.wantErr) || (st.wantErr == nil && err != nil) {
			t.Errorf("%s: err %v, want %v", st.desc, err, st.wantErr)
		}
		if changed != st.wantChanged || !slices.Equal(got, st.want) {
			t.Errorf("%s: Changed() = %q, %v; want %q, %v", st.desc, got, changed, st.want, st.wantChanged)
		}
	}

	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("gopher://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenSeedFile(bad); !errors.Is(err, ErrInvalidSeeds) {
		t.Errorf("bad initial file: %v", err)
	}
}

// LoadSeeds reads a seed file: one card URL or origin per line; blank lines
// and lines starting with '#' are ignored, as is anything after " #" (a
// fragment cannot matter: ResolveCardURLs drops it). Entries naming the
// same card URLs are kept once, first occurrence first. Every bad line is
// reported, as a *SeedLineError ("PATH:LINE: reason"), in one error
// wrapping ErrInvalidSeeds.
func LoadSeeds(path string) ([]string, error) {
	data, err := readSeedFile(path)
	if err != nil {
		return nil, err
	}
	return parseSeeds(path, data)
}
