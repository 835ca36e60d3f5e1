package crawler

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLoadSeeds(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
		errHas  []string // substrings of the error; nil: no error
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
			name:    "every bad line is reported with its number",
			content: "https://ok.example\nftp://bad.example\n\nhttps://user:pw@x.example/\n",
			errHas:  []string{"seeds.txt:2: invalid card URL", "seeds.txt:4: invalid card URL: user info"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "seeds.txt")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadSeeds(path)
			if tt.errHas != nil {
				if !errors.Is(err, ErrInvalidSeeds) || !errors.Is(err, ErrInvalidURL) {
					t.Fatalf("err = %v, want ErrInvalidSeeds and ErrInvalidURL", err)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
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

func TestWatchSeeds(t *testing.T) {
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

	var mu sync.Mutex
	var calls [][]string
	got := func() [][]string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(calls)
	}
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for len(got()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("apply called %d times, want %d: %q", len(got()), n, got())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- WatchSeeds(ctx, path, 10*time.Millisecond, nil, func(s []string) {
			mu.Lock()
			calls = append(calls, s)
			mu.Unlock()
		})
	}()
	waitFor(1)
	write("https://a.example\nhttps://b.example\n")
	waitFor(2)
	write("https://a.example\nnot a url\n") // invalid: ignored, last list stays
	time.Sleep(60 * time.Millisecond)
	write("# same list, different bytes\nhttps://a.example\nhttps://b.example\n")
	waitFor(3)
	time.Sleep(60 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"https://a.example"}, {"https://a.example", "https://b.example"}, {"https://a.example", "https://b.example"}}
	if c := got(); !slices.EqualFunc(c, want, slices.Equal) {
		t.Errorf("apply calls %q, want %q", c, want)
	}

	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("gopher://x\n"), 0o600)
	if err := WatchSeeds(t.Context(), bad, time.Millisecond, nil, func([]string) { t.Error("apply called for a bad file") }); !errors.Is(err, ErrInvalidSeeds) {
		t.Errorf("bad initial file: %v", err)
	}
}
