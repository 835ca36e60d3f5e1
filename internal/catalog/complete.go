package catalog

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/a2aregistry/registry/internal/search"
)

// Completion is a value a search box may offer for what has been typed.
type Completion struct {
	// Field is the filter that selects the value: FieldTag, or FieldSkill
	// for a skill's name.
	Field, Value string
	// Count is the number of agents the caller sees carrying the value.
	Count int
}

// Completions are at most MaxCompletions, DefaultCompletions unless asked.
const (
	DefaultCompletions = 10
	MaxCompletions     = 50
)

// completionFields maps the index's fields offered as completions to the
// filters that select their values.
var completionFields = map[string]string{FieldTag: FieldTag, fieldSkillName: FieldSkill}

// Complete returns the tags and skill names of the agents the scope sees
// that typed begins, or one of whose words it begins (without regard to
// case or diacritics), the most common first, at most limit (0: the
// default). Agents outside the scope are neither offered nor counted: a
// word only they hold is never completed, as the search would not find
// them. A prefix over MaxQueryTextLen characters or not UTF-8 is
// ErrInvalidQuery; while the index is built, ErrIndexNotReady (as Search).
func (s *Store) Complete(ctx context.Context, sc Scope, typed string, limit int) ([]Completion, error) {
	if utf8.RuneCountInString(typed) > MaxQueryTextLen {
		return nil, fmt.Errorf("%w: q is longer than %d characters", ErrInvalidQuery, MaxQueryTextLen)
	}
	if !utf8.ValidString(typed) {
		return nil, fmt.Errorf("%w: q is not valid UTF-8", ErrInvalidQuery)
	}
	switch {
	case limit < 0:
		return nil, fmt.Errorf("%w: limit must be positive", ErrInvalidQuery)
	case limit == 0:
		limit = DefaultCompletions
	}
	limit = min(limit, MaxCompletions)
	// The search's own scope filters and exclusions: one rule for what a
	// caller sees.
	sq := indexQuery(Query{Scope: sc}, nil)
	cq := search.CompleteQuery{Prefix: typed, Fields: []string{FieldTag, fieldSkillName}, Filters: sq.Filters,
		Exclude: sq.Exclude, Limit: limit}
	got, err := s.idx().Complete(cq)
	if errors.Is(err, search.ErrNotReady) {
		if !s.awaitGrace(ctx, s.startBuild()) {
			return nil, fmt.Errorf("completing: %w", ErrIndexNotReady)
		}
		got, err = s.idx().Complete(cq)
	}
	if err != nil {
		return nil, fmt.Errorf("completing: %w", err)
	}
	out := make([]Completion, len(got))
	for i, c := range got {
		out[i] = Completion{Field: completionFields[c.Field], Value: c.Value, Count: c.Count}
	}
	return out, nil
}
