package crawler

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxSeedFileBytes caps a seed file; a million URLs fit comfortably.
const MaxSeedFileBytes = 64 << 20

// ErrInvalidSeeds is wrapped by LoadSeeds when a line is not a card URL or
// origin; the joined line errors follow it.
var ErrInvalidSeeds = errors.New("invalid seed file")

// SeedLineError is one bad line of a seed file.
type SeedLineError struct {
	Path string
	Line int   // 1-based
	Err  error // wraps ErrInvalidURL
}

func (e *SeedLineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }
func (e *SeedLineError) Unwrap() error { return e.Err }

func readSeedFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading seed file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSeedFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading seed file %s: %w", path, err)
	}
	if len(data) > MaxSeedFileBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalidSeeds, path, MaxSeedFileBytes)
	}
	return data, nil
}

func parseSeeds(path string, data []byte) ([]string, error) {
	var (
		seeds []string
		errs  []error
		seen  = make(map[string]bool)
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxSeedFileBytes)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if i := strings.Index(line, "\t#"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		urls, err := ResolveCardURLs(line)
		if err != nil {
			errs = append(errs, &SeedLineError{Path: path, Line: n, Err: err})
			continue
		}
		if key := urls[0]; !seen[key] {
			seen[key] = true
			seeds = append(seeds, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading seed file %s: %w", path, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSeeds, errors.Join(errs...))
	}
	return seeds, nil
}

// SeedFile is a seed file watched for changes. Changed polls it: size and
// modification time first, then a content hash, so no file-notification
// dependency is needed and an editor's save-by-rename is seen. The caller
// polls (the registry does so periodically); a SeedFile is not safe for
// concurrent use.
type SeedFile struct {
	path string
	st   os.FileInfo // nil: compare content on the next poll
	hash [sha256.Size]byte
}

// OpenSeedFile reads and parses the seed file at path. Its error should
// stop start-up: a bad file at start is a mistake to fix, not to log.
func OpenSeedFile(path string) (*SeedFile, []string, error) {
	data, err := readSeedFile(path)
	if err != nil {
		return nil, nil, err
	}
	seeds, err := parseSeeds(path, data)
	if err != nil {
		return nil, nil, err
	}
	st, _ := os.Stat(path)
	return &SeedFile{path: path, st: st, hash: sha256.Sum256(data)}, seeds, nil
}

// Changed returns the complete list when the file's content changed since
// the last good read; registering an already known agent is harmless, so
// callers need not diff. A file being edited, deleted or invalid is an
// error and the last good list stays in force: the next call tries again.
func (f *SeedFile) Changed() (seeds []string, changed bool, err error) {
	cur, err := os.Stat(f.path)
	if err != nil {
		f.st = nil
		return nil, false, fmt.Errorf("seed file unreadable, keeping the last list: %w", err)
	}
	if f.st != nil && cur.Size() == f.st.Size() && cur.ModTime().Equal(f.st.ModTime()) {
		return nil, false, nil
	}
	f.st = cur
	data, err := readSeedFile(f.path)
	if err != nil {
		return nil, false, fmt.Errorf("seed file unreadable, keeping the last list: %w", err)
	}
	h := sha256.Sum256(data)
	if h == f.hash {
		return nil, false, nil
	}
	seeds, err = parseSeeds(f.path, data)
	if err != nil {
		return nil, false, fmt.Errorf("seed file invalid, keeping the last list: %w", err)
	}
	f.hash = h
	return seeds, true, nil
}
