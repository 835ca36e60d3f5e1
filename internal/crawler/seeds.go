package crawler

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// MaxSeedFileBytes caps a seed file; a million URLs fit comfortably.
const MaxSeedFileBytes = 64 << 20

// ErrInvalidSeeds is wrapped by LoadSeeds when a line is not a card URL or
// origin; the joined line errors follow it.
var ErrInvalidSeeds = errors.New("invalid seed file")

// LoadSeeds reads a seed file: one card URL or origin per line; blank lines
// and lines starting with '#' are ignored, as is anything after " #" (a
// fragment cannot matter: ResolveCardURLs drops it). Entries naming the
// same card URLs are kept once, first occurrence first. Every bad line is
// reported, as "PATH:LINE: reason", in one error wrapping ErrInvalidSeeds
// and ErrInvalidURL.
func LoadSeeds(path string) ([]string, error) {
	data, err := readSeedFile(path)
	if err != nil {
		return nil, err
	}
	return parseSeeds(path, data)
}

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
			errs = append(errs, fmt.Errorf("%s:%d: %w", path, n, err))
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

// WatchSeeds loads the seed file, hands its entries to apply, then polls
// the file every interval (size and modification time, then a content
// hash, so no file-notification dependency is needed and an editor's
// save-by-rename is seen) and calls apply again with the full list whenever
// the content changed. apply always gets the complete list; registering an
// already known agent is harmless, so callers need not diff.
//
// A failure of the first load is returned at once, so a bad file stops
// start-up. Later failures (a file being edited, deleted or invalid) are
// logged and the last good list stays in force. WatchSeeds returns nil when
// ctx ends.
func WatchSeeds(ctx context.Context, path string, interval time.Duration, log *slog.Logger, apply func([]string)) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if interval <= 0 {
		interval = 10 * time.Second
	}
	data, err := readSeedFile(path)
	if err != nil {
		return err
	}
	seeds, err := parseSeeds(path, data)
	if err != nil {
		return err
	}
	st, _ := os.Stat(path)
	lastHash := sha256.Sum256(data)
	apply(seeds)

	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		cur, err := os.Stat(path)
		if err != nil {
			log.WarnContext(ctx, "seed file unreadable; keeping the last list", "path", path, "error", err)
			st = nil
			continue
		}
		if st != nil && cur.Size() == st.Size() && cur.ModTime().Equal(st.ModTime()) {
			continue
		}
		st = cur
		data, err := readSeedFile(path)
		if err != nil {
			log.WarnContext(ctx, "seed file unreadable; keeping the last list", "path", path, "error", err)
			continue
		}
		h := sha256.Sum256(data)
		if h == lastHash {
			continue
		}
		seeds, err := parseSeeds(path, data)
		if err != nil {
			log.WarnContext(ctx, "seed file invalid; keeping the last list", "path", path, "error", err)
			continue
		}
		lastHash = h
		log.InfoContext(ctx, "seed file changed", "path", path, "seeds", len(seeds))
		apply(seeds)
	}
}
