package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Annotations are what the operator says about an agent, beside its card:
// the team that owns it, whom to contact, how sensitive the data it sees
// is, free key=value labels and internal notes. They are stored apart from
// the card (table annotations, keyed by card URL), so no card version ever
// holds them, a new card version keeps them, and an agent removed and
// registered again under the same card URL finds them again.
type Annotations struct {
	OwnerTeam      string
	Contact        string
	Classification string
	// Labels maps a key (lower-case, see validLabelKey) to its value.
	Labels map[string]string
	// Notes are internal: callers below editor never see them.
	Notes string
	// ChangedAt and ChangedBy tell the last change (the actor's name);
	// zero when the agent was never annotated.
	ChangedAt time.Time
	ChangedBy string
}

// Annotation search fields. owner_team, classification and label are
// facets; label_key is filter-only: `label=key` matches any value.
const (
	FieldOwnerTeam      = "owner_team"
	FieldClassification = "classification"
	// FieldLabel values are "key:value".
	FieldLabel    = "label"
	fieldLabelKey = "label_key"
)

// Bounds of annotations: small enough that an agent's annotations fit one
// request body and one line of a page, large enough for real teams.
const (
	MaxLabels            = 32
	MaxLabelKeyLen       = 63
	MaxLabelValueLen     = 128
	MaxOwnerTeamLen      = 128
	MaxContactLen        = 256
	MaxClassificationLen = 64
	MaxNotesLen          = 4000
)

// ErrInvalidAnnotations is wrapped by every *AnnotationError.
var ErrInvalidAnnotations = errors.New("catalog: invalid annotations")

// AnnotationError names the field of annotations that was refused and why.
type AnnotationError struct {
	// Field is the API's name: owner_team, contact, classification,
	// labels, notes.
	Field  string
	Reason string
}

func (e *AnnotationError) Error() string { return e.Field + ": " + e.Reason }

func (e *AnnotationError) Unwrap() error { return ErrInvalidAnnotations }

// IsZero reports whether a holds nothing (an agent never annotated, or
// annotated and cleared).
func (a Annotations) IsZero() bool {
	return a.OwnerTeam == "" && a.Contact == "" && a.Classification == "" && len(a.Labels) == 0 && a.Notes == ""
}

// NormalizeAnnotations trims a's text and checks it; the error is an
// *AnnotationError. ChangedAt and ChangedBy are kept as given.
func NormalizeAnnotations(a Annotations) (Annotations, error) {
	out := Annotations{
		OwnerTeam: strings.TrimSpace(a.OwnerTeam), Contact: strings.TrimSpace(a.Contact),
		Classification: strings.TrimSpace(a.Classification), Notes: strings.TrimSpace(a.Notes),
		ChangedAt: a.ChangedAt, ChangedBy: a.ChangedBy,
	}
	lines := []struct {
		field, value string
		max          int
	}{
		{"owner_team", out.OwnerTeam, MaxOwnerTeamLen},
		{"contact", out.Contact, MaxContactLen},
	}
	for _, l := range lines {
		if err := checkLine(l.field, l.value, l.max); err != nil {
			return Annotations{}, err
		}
	}
	if out.Classification != "" {
		if err := checkValue("classification", out.Classification, MaxClassificationLen); err != nil {
			return Annotations{}, err
		}
	}
	if !utf8.ValidString(out.Notes) || utf8.RuneCountInString(out.Notes) > MaxNotesLen {
		return Annotations{}, &AnnotationError{"notes", fmt.Sprintf("must be UTF-8 text of at most %d characters", MaxNotesLen)}
	}
	if strings.ContainsFunc(out.Notes, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }) {
		return Annotations{}, &AnnotationError{"notes", "must not hold control characters"}
	}
	if len(a.Labels) > MaxLabels {
		return Annotations{}, &AnnotationError{"labels", fmt.Sprintf("at most %d labels", MaxLabels)}
	}
	if len(a.Labels) > 0 {
		out.Labels = make(map[string]string, len(a.Labels))
	}
	for _, k := range slices.Sorted(maps.Keys(a.Labels)) {
		if !validLabelKey(k) {
			return Annotations{}, &AnnotationError{"labels", fmt.Sprintf("key %q must be 1 to %d characters of a-z, 0-9, '.', '_', '-', '/', "+
				"starting and ending with a letter or digit", truncateRunes(k, 80), MaxLabelKeyLen)}
		}
		v := strings.TrimSpace(a.Labels[k])
		if err := checkValue("labels", v, MaxLabelValueLen); err != nil {
			err.Reason = fmt.Sprintf("value of %q %s", k, err.Reason)
			return Annotations{}, err
		}
		out.Labels[k] = v
	}
	return out, nil
}

// checkLine accepts one line of text: no control or invisible formatting
// characters (which could make a team name look like another).
func checkLine(field, v string, max int) error {
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > max {
		return &AnnotationError{field, fmt.Sprintf("must be UTF-8 text of at most %d characters", max)}
	}
	if strings.ContainsFunc(v, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		return &AnnotationError{field, "must be one line without control or invisible formatting characters"}
	}
	return nil
}

// checkValue accepts a label value or a classification: 1 to max letters,
// digits, spaces and . _ - / @ + :, so it reads the same in a URL, a
// facet list and a chip.
func checkValue(field, v string, max int) *AnnotationError {
	ok := v != "" && utf8.ValidString(v) && utf8.RuneCountInString(v) <= max
	for _, r := range v {
		if !ok {
			break
		}
		ok = unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" ._-/@+:", r)
	}
	if !ok {
		return &AnnotationError{field, fmt.Sprintf("must be 1 to %d letters, digits, spaces or . _ - / @ + :", max)}
	}
	return nil
}

func validLabelKey(k string) bool {
	if k == "" || len(k) > MaxLabelKeyLen {
		return false
	}
	alnum := func(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }
	for i := 0; i < len(k); i++ {
		b := k[i]
		if !alnum(b) && (i == 0 || i == len(k)-1 || !strings.ContainsRune("._-/", rune(b))) {
			return false
		}
	}
	return true
}

// ParseLabelFilter splits a label filter value, "key:value" or "key"
// (any value), and reports whether the key is one a label may have.
func ParseLabelFilter(v string) (key, value string, ok bool) {
	key, value, hasValue := strings.Cut(strings.TrimSpace(v), ":")
	key = strings.ToLower(strings.TrimSpace(key))
	value = strings.TrimSpace(value)
	if !validLabelKey(key) || (hasValue && value == "") {
		return "", "", false
	}
	return key, value, true
}

// annotationValues are the search fields annotations set: every field is
// present, so that SetFields also clears what was removed.
func annotationValues(a Annotations) map[string][]string {
	vals := map[string][]string{
		FieldOwnerTeam: nil, FieldClassification: nil, FieldLabel: nil, fieldLabelKey: nil,
	}
	if a.OwnerTeam != "" {
		vals[FieldOwnerTeam] = []string{a.OwnerTeam}
	}
	if a.Classification != "" {
		vals[FieldClassification] = []string{a.Classification}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Labels)) {
		vals[FieldLabel] = append(vals[FieldLabel], k+":"+a.Labels[k])
		vals[fieldLabelKey] = append(vals[fieldLabelKey], k)
	}
	return vals
}

// annotationFacets are annotationValues as index facets.
func annotationFacets(a Annotations) []facetRecord {
	vals := annotationValues(a)
	var out []facetRecord
	for _, f := range []string{FieldOwnerTeam, FieldClassification, FieldLabel, fieldLabelKey} {
		for _, v := range vals[f] {
			out = append(out, facetRecord{Field: f, Value: v})
		}
	}
	return out
}

// annotationRow is the stored form of Annotations.
type annotationRow struct {
	CardURL        string
	OwnerTeam      string
	Contact        string
	Classification string
	Labels         string
	Notes          string
	ChangedAt      time.Time
	ChangedBy      string
}

func (r annotationRow) annotations() (Annotations, error) {
	a := Annotations{OwnerTeam: r.OwnerTeam, Contact: r.Contact, Classification: r.Classification, Notes: r.Notes,
		ChangedAt: r.ChangedAt.UTC(), ChangedBy: r.ChangedBy}
	var err error
	a.Labels, err = decodeLabels(r.Labels)
	return a, err
}

func decodeLabels(raw string) (map[string]string, error) {
	if raw == "" || raw == "{}" {
		return nil, nil
	}
	var labels map[string]string
	if err := json.Unmarshal([]byte(raw), &labels); err != nil {
		return nil, fmt.Errorf("decoding labels: %w", err)
	}
	return labels, nil
}

func encodeLabels(labels map[string]string) string {
	if len(labels) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(labels) // a map of strings always marshals, keys sorted
	return string(b)
}

const annotationColumns = "card_url, owner_team, contact, classification, labels, notes, changed_at, changed_by"

// annotationsOf reads the annotations of the given card URLs; URLs without
// any are absent from the map.
func annotationsOf(db *gorm.DB, urls []string) (map[string]Annotations, error) {
	out := make(map[string]Annotations)
	for chunk := range slices.Chunk(urls, 500) {
		var rows []annotationRow
		if err := db.Raw("SELECT "+annotationColumns+" FROM annotations WHERE card_url IN ?", chunk).Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("reading annotations: %w", err)
		}
		for _, r := range rows {
			a, err := r.annotations()
			if err != nil {
				return nil, fmt.Errorf("annotations of %s: %w", r.CardURL, err)
			}
			out[r.CardURL] = a
		}
	}
	return out, nil
}

// writeAnnotations replaces the annotations of cardURL inside tx; empty
// annotations delete the row.
func writeAnnotations(tx *gorm.DB, cardURL string, a Annotations) error {
	if err := tx.Exec("DELETE FROM annotations WHERE card_url = ?", cardURL).Error; err != nil {
		return fmt.Errorf("replacing annotations of %s: %w", cardURL, err)
	}
	if a.IsZero() {
		return nil
	}
	if err := tx.Exec("INSERT INTO annotations ("+annotationColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		cardURL, a.OwnerTeam, a.Contact, a.Classification, encodeLabels(a.Labels), a.Notes, a.ChangedAt.UTC(), a.ChangedBy).Error; err != nil {
		return fmt.Errorf("storing annotations of %s: %w", cardURL, err)
	}
	return nil
}

// SetAnnotations replaces the annotations of agent agentID and returns
// them as stored. The agent's seq and updated_at move on, so that other
// replicas' Sync reindexes it; this Store's index changes in place. The
// audit row, in the same transaction, says what changed. Setting what is
// stored already writes nothing. Errors: ErrNotFound for an unknown
// agent or one the scope does not see (a write reaches only what its
// caller may read), an *AnnotationError for refused input.
func (s *Store) SetAnnotations(ctx context.Context, actor Actor, sc Scope, agentID string, in Annotations) (Annotations, error) {
	if err := actor.validate(); err != nil {
		return Annotations{}, err
	}
	a, err := NormalizeAnnotations(in)
	if err != nil {
		return Annotations{}, err
	}
	a.ChangedAt, a.ChangedBy = time.Now().UTC().Truncate(time.Microsecond), actor.Name
	var up *fieldUpdate
	err = s.transact(ctx, func(tx *txn) error {
		cond, args := sc.visibleSQL()
		if cond != "" {
			cond = " AND " + cond
		}
		q := "SELECT a.pk, a.seq, a.card_url FROM agents a WHERE a.id = ?" + cond
		if tx.d == dialectPostgres {
			// Orders concurrent annotations of one agent, and its upserts.
			q += " FOR UPDATE"
		}
		var (
			pk, seq int64
			cardURL string
		)
		if err := tx.Raw(q, append([]any{agentID}, args...)...).Row().Scan(&pk, &seq, &cardURL); err != nil {
			return fmt.Errorf("agent %s: %w", agentID, translateRow(err))
		}
		stored, err := annotationsOf(tx.DB, []string{cardURL})
		if err != nil {
			return err
		}
		old := stored[cardURL]
		detail := annotationChanges(old, a)
		if detail == nil {
			a = old
			return nil
		}
		if err := writeAnnotations(tx.DB, cardURL, a); err != nil {
			return err
		}
		seqs, err := allocate(tx, "seq", 1)
		if err != nil {
			return err
		}
		if err := tx.Exec("UPDATE agents SET seq = ?, updated_at = ? WHERE pk = ?", seqs[0], a.ChangedAt, pk).Error; err != nil {
			return fmt.Errorf("annotating agent %s: %w", agentID, err)
		}
		up = &fieldUpdate{pk: pk, prev: seq, seq: seqs[0], values: annotationValues(a)}
		detail["card_url"] = cardURL
		return writeAudit(tx.DB, actor, audit{action: ActionAnnotate, targetKind: TargetAgent, targetID: agentID, detail: detail})
	})
	if err != nil {
		return Annotations{}, fmt.Errorf("annotating agent %s: %w", agentID, err)
	}
	if up != nil {
		if err := s.publishFields(ctx, []fieldUpdate{*up}); err != nil {
			s.log.Warn("refreshing search index after annotating", "agent_id", agentID, "err", err)
		}
	}
	if a.IsZero() {
		a.ChangedAt, a.ChangedBy = time.Time{}, ""
	}
	return a, nil
}

// annotationChanges is the audit detail of replacing old by cur: each
// changed field with its old and new value (labels as added, changed and
// removed keys; notes, being internal text, only as changed); nil when
// nothing changed.
func annotationChanges(old, cur Annotations) map[string]any {
	d := map[string]any{}
	for _, f := range []struct {
		name     string
		old, cur string
	}{
		{"owner_team", old.OwnerTeam, cur.OwnerTeam},
		{"contact", old.Contact, cur.Contact},
		{"classification", old.Classification, cur.Classification},
	} {
		if f.old != f.cur {
			d[f.name] = map[string]string{"from": f.old, "to": f.cur}
		}
	}
	if old.Notes != cur.Notes {
		d["notes"] = "changed"
	}
	set, removed := map[string]string{}, []string{}
	for k, v := range cur.Labels {
		if ov, ok := old.Labels[k]; !ok || ov != v {
			set[k] = v
		}
	}
	for k := range old.Labels {
		if _, ok := cur.Labels[k]; !ok {
			removed = append(removed, k)
		}
	}
	slices.Sort(removed)
	if len(set) > 0 || len(removed) > 0 {
		d["labels"] = map[string]any{"set": set, "removed": removed}
	}
	if len(d) == 0 {
		return nil
	}
	return d
}

// storedAnnotationFacets are the facets of the annotation columns loadDocs
// reads (NULL when the agent has no annotations row).
func storedAnnotationFacets(owner, classification, labels sql.NullString) ([]facetRecord, error) {
	if !owner.Valid {
		return nil, nil
	}
	l, err := decodeLabels(labels.String)
	if err != nil {
		return nil, err
	}
	return annotationFacets(Annotations{OwnerTeam: owner.String, Classification: classification.String, Labels: l}), nil
}

// addAnnotationFacets adds to the index documents of a card write the
// facets of their agents' annotations; recs are the batch's agents rows,
// found by pk.
func addAnnotationFacets(tx *txn, docs []indexedDoc, recs []agentRecord) error {
	urlOf := make(map[int64]string, len(docs))
	for i := range recs {
		urlOf[recs[i].PK] = recs[i].CardURL
	}
	urls := make([]string, 0, len(docs))
	for _, d := range docs {
		urls = append(urls, urlOf[d.pk])
	}
	byURL, err := annotationsOf(tx.DB, urls)
	if err != nil || len(byURL) == 0 {
		return err
	}
	for k := range docs {
		if a, ok := byURL[urlOf[docs[k].pk]]; ok {
			docs[k].facets = append(docs[k].facets, annotationFacets(a)...)
		}
	}
	return nil
}

// ExportedAnnotations are the annotations of a card URL no agent has now:
// kept after its agent was removed, for when it is registered again.
type ExportedAnnotations struct {
	CardURL     string
	Annotations Annotations
}

// ExportOrphanAnnotations calls fn with the annotations of every card URL
// without an agent, in card URL order. Exports carry them so that a
// restored catalog keeps them as this one does.
func (s *Store) ExportOrphanAnnotations(ctx context.Context, fn func(ExportedAnnotations) error) error {
	var rows []annotationRow
	if err := s.db.WithContext(ctx).Raw("SELECT " + annotationColumns + ` FROM annotations n
		WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.card_url = n.card_url) ORDER BY card_url`).Scan(&rows).Error; err != nil {
		return fmt.Errorf("exporting annotations: %w", err)
	}
	for _, r := range rows {
		a, err := r.annotations()
		if err != nil {
			return fmt.Errorf("exporting annotations of %s: %w", r.CardURL, err)
		}
		a.ChangedAt = exportTime(a.ChangedAt)
		if err := fn(ExportedAnnotations{CardURL: r.CardURL, Annotations: a}); err != nil {
			return err
		}
	}
	return nil
}

// RestoreAnnotations stores exported annotations of a card URL as they
// were (change time and author included), replacing any it has.
func (s *Store) RestoreAnnotations(ctx context.Context, e ExportedAnnotations) error {
	a, err := NormalizeAnnotations(e.Annotations)
	if err != nil {
		return fmt.Errorf("restoring annotations of %s: %w", e.CardURL, err)
	}
	if strings.TrimSpace(e.CardURL) == "" {
		return fmt.Errorf("%w: annotations without a card URL", ErrInvalidQuery)
	}
	err = s.transact(ctx, func(tx *txn) error {
		var n int64
		if err := tx.Raw("SELECT COUNT(*) FROM agents WHERE card_url = ?", e.CardURL).Scan(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			// An agent's annotations come with the agent (ImportAgent).
			return fmt.Errorf("%w: card URL %s has an agent", ErrConflict, e.CardURL)
		}
		return writeAnnotations(tx.DB, e.CardURL, a)
	})
	if err != nil {
		return fmt.Errorf("restoring annotations of %s: %w", e.CardURL, err)
	}
	return nil
}
