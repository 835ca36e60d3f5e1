package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/search"
)

// The search index (internal/search) lives in memory beside the database,
// which stays the source of truth: the index is built from it (agents,
// skills) on first search or WarmIndex, updated after each
// committed write of this process, and refreshed from rows that other
// replicas changed (see Store.Sync).

// ErrIndexNotReady is returned by Search while the search index is being
// built: answering from a partial index would silently miss agents, and
// waiting would hang the client for seconds.
var ErrIndexNotReady = search.ErrNotReady

// ErrClosed is returned by work asked of a closed Store.
var ErrClosed = errors.New("catalog: store closed")

// indexedDoc is what a committed write publishes to the index.
type indexedDoc struct {
	pk int64
	// seq orders writes of one agent: the index never replaces a doc with
	// an older one, whichever order writers, syncs and builds deliver them.
	seq     int64
	sortKey string
	facets  []facetRecord
	// parts are the agent's skills (skillParts).
	parts [][]facetRecord
	text  searchText
}

func (d indexedDoc) searchDoc() search.Doc {
	sd := search.Doc{ID: uint32(d.pk), Seq: d.seq, SortKey: d.sortKey, Facets: searchFacets(d.facets), Text: d.text}
	if len(d.parts) > 0 {
		sd.Parts = make([][]search.Facet, len(d.parts))
		for i, p := range d.parts {
			sd.Parts[i] = searchFacets(p)
		}
	}
	return sd
}

func searchFacets(fs []facetRecord) []search.Facet {
	out := make([]search.Facet, len(fs))
	for i, f := range fs {
		out[i] = search.Facet{Field: f.Field, Value: f.Value}
	}
	return out
}

func newSearchIndex() *search.Index {
	return search.New(search.Options{FacetFields: FilterFields, PartFields: partFields})
}

// idx returns the current search index.
func (s *Store) idx() *search.Index { return s.index.Load() }

// publish applies committed writes to the index once its build has
// started; before, the build will read them from the database.
func (s *Store) publish(docs []indexedDoc) {
	if len(docs) == 0 || !s.indexStarted() {
		return
	}
	sd := make([]search.Doc, len(docs))
	for i, d := range docs {
		sd[i] = d.searchDoc()
	}
	s.idx().Apply(sd)
}

// indexStarted tells whether the index is built or being built.
func (s *Store) indexStarted() bool {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	return s.build != nil
}

// fieldUpdate is an in-place change of status fields (health, signature
// verdict) of one agent, from sequence prev to seq.
type fieldUpdate struct {
	pk, prev, seq int64
	values        map[string][]string
}

// publishFields applies committed status changes to the index in place
// (search.Index.SetFields): no reload and no text analysis. An agent the
// index holds at another state than the change was made on (a concurrent
// write, or the build still under way) is reloaded from the database.
func (s *Store) publishFields(ctx context.Context, ups []fieldUpdate) error {
	if len(ups) == 0 || !s.indexStarted() {
		return nil
	}
	idx := s.idx()
	var reload []int64
	for _, u := range ups {
		if !idx.SetFields(uint32(u.pk), u.prev, u.seq, u.values) {
			reload = append(reload, u.pk)
		}
	}
	return s.refreshDocs(ctx, reload)
}

// refreshDocs reloads the index documents of the given agents after a
// write that changed a facet in place (health, signature status); their
// seq makes a concurrent newer write win.
func (s *Store) refreshDocs(ctx context.Context, pks []int64) error {
	if len(pks) == 0 || !s.indexStarted() {
		return nil
	}
	for chunk := range slices.Chunk(pks, 500) {
		where, args := inList("pk", chunk)
		var docs []search.Doc
		if err := s.loadDocs(ctx, where, args, func(d search.Doc) { docs = append(docs, d) }); err != nil {
			return err
		}
		s.idx().Apply(docs)
	}
	return nil
}

// IndexState describes the search index, for readiness reports.
type IndexState struct {
	// Building is set while the index is being built; Ready once it
	// answers searches.
	Building, Ready bool
	// Agents counts the agents indexed.
	Agents  int
	BuiltAt time.Time
}

// IndexState reports the search index's state.
func (s *Store) IndexState() IndexState {
	st := s.idx().State()
	return IndexState{Building: s.indexStarted() && !st.Ready, Ready: st.Ready, Agents: st.Docs, BuiltAt: st.BuiltAt}
}

// indexBuild is the one build of the search index: started on first
// search or WarmIndex, retried after a failure.
type indexBuild struct {
	started time.Time
	done    chan struct{}
	err     error
}

// indexGrace is how long into a build searches wait for it rather than
// answer ErrIndexNotReady: a small catalog is indexed in milliseconds, and
// its first searches need not fail for that; a large one's searches are
// refused at once after the first second.
const indexGrace = time.Second

// awaitGrace waits for the build b until it is done, its grace period has
// passed, or ctx ends; it reports whether the build is done without error.
func (s *Store) awaitGrace(ctx context.Context, b *indexBuild) bool {
	if b == nil {
		return false
	}
	wait := time.Until(b.started.Add(s.indexGrace))
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-b.done:
		return b.err == nil
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// startBuild starts the index build unless it is under way or done. It
// returns nil once the Store is closed.
func (s *Store) startBuild() *indexBuild {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.build != nil || s.closed {
		return s.build
	}
	b := &indexBuild{started: time.Now(), done: make(chan struct{})}
	s.build = b
	s.wg.Go(func() { s.runBuild(b) })
	return b
}

// WarmIndex builds the search index now rather than on the first search,
// and waits for it.
func (s *Store) WarmIndex(ctx context.Context) error {
	b := s.startBuild()
	if b == nil {
		return fmt.Errorf("building search index: %w", ErrClosed)
	}
	select {
	case <-b.done:
		if b.err != nil {
			return fmt.Errorf("building search index: %w", b.err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the search index: %w", ctx.Err())
	}
}

func (s *Store) runBuild(b *indexBuild) {
	defer close(b.done)
	start := time.Now()
	idx := s.idx()
	err := s.buildIndex(s.ctx, idx)
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if err != nil {
		b.err = err
		// The next search or WarmIndex tries again, on an empty index: the
		// partial one may hold agents deleted before the retry reads.
		s.build = nil
		s.index.Store(newSearchIndex())
		if s.ctx.Err() == nil {
			s.log.Error("building search index", "err", err)
		}
		return
	}
	idx.MarkReady()
	st := idx.State()
	s.log.Info("search index built", "agents", st.Docs, "duration", time.Since(start))
	s.syncedAt = start
}

// buildIndex reads every agent into the index: the database read and the
// index's (parallel) text analysis and insertion overlap. With an
// Embedder, the stored vectors of its space are read beside the agents
// and those of each agent's current text go into the index with it
// (loadVectors).
func (s *Store) buildIndex(ctx context.Context, idx *search.Index) error {
	const batch = 1024
	type docBatch struct {
		docs []search.Doc
		vecs []search.Vector
	}
	var (
		space string
		dim   int
		vecs  *storedVectors
	)
	if s.embedder != nil {
		space, dim = s.embedder.Space(), s.embedder.Dimension()
		var err error
		if vecs, err = s.loadVectors(ctx, space, dim); err != nil {
			return err
		}
		defer vecs.close()
		if vecs.maxPK > 0 {
			idx.ReserveVectors(space, dim, uint32(vecs.maxPK))
		}
	}
	batches := make(chan docBatch, 2)
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		for b := range batches {
			idx.Apply(b.docs)
			if len(b.vecs) > 0 {
				idx.SetVectors(space, dim, b.vecs)
			}
		}
	}()
	b := docBatch{docs: make([]search.Doc, 0, batch)}
	var vecErr error
	err := s.loadDocs(ctx, "", nil, func(d search.Doc) {
		b.docs = append(b.docs, d)
		if vecs != nil && vecErr == nil {
			var (
				v  search.Vector
				ok bool
			)
			if v, ok, vecErr = vecs.of(d); ok {
				b.vecs = append(b.vecs, v)
			}
		}
		if len(b.docs) == batch {
			batches <- b
			b = docBatch{docs: make([]search.Doc, 0, batch)}
		}
	})
	batches <- b
	close(batches)
	<-applied
	if err == nil && vecErr != nil {
		err = fmt.Errorf("loading stored vectors: %w", vecErr)
	}
	return err
}

// storedVectors streams the stored vectors of one space and dimension in
// agent order, beside loadDocs' documents.
type storedVectors struct {
	rows *sql.Rows
	dim  int
	// maxPK is the largest agent pk with a vector of the space stored
	// (0 when none): the index makes room for the vectors up to it at once.
	maxPK int64
	// next is the row read and not yet matched; done once none is left.
	next struct {
		pk     int64
		digest string
		raw    []byte
	}
	read, done bool
}

// loadVectors starts reading the vectors of space and dim stored for the
// listed agents, in pk order.
func (s *Store) loadVectors(ctx context.Context, space string, dim int) (*storedVectors, error) {
	var maxPK sql.NullInt64
	if err := s.sqlDB.QueryRowContext(s.stmtCtx(ctx), rebind(s.dialect,
		"SELECT MAX(agent_pk) FROM agent_embeddings WHERE model = ? AND dimension = ?"), space, dim).Scan(&maxPK); err != nil {
		return nil, fmt.Errorf("loading stored vectors: %w", err)
	}
	rows, err := s.queryRows(s.stmtCtx(ctx),
		"SELECT e.agent_pk, e.text_sha256, e.vector FROM agent_embeddings e JOIN agents a ON a.pk = e.agent_pk "+
			"WHERE a.removed_at IS NULL AND e.model = ? AND e.dimension = ? ORDER BY e.agent_pk", space, dim)
	if err != nil {
		return nil, fmt.Errorf("loading stored vectors: %w", err)
	}
	return &storedVectors{rows: rows, dim: dim, maxPK: maxPK.Int64}, nil
}

// of returns the stored vector of document d (read in pk order) when it
// is of d's current text: one of other text, or damaged, is left for the
// embeddings worker to embed again.
func (sv *storedVectors) of(d search.Doc) (search.Vector, bool, error) {
	pk := int64(d.ID)
	for !sv.done && (!sv.read || sv.next.pk < pk) {
		if !sv.rows.Next() {
			sv.done = true
			return search.Vector{}, false, sv.rows.Err()
		}
		if err := sv.rows.Scan(&sv.next.pk, &sv.next.digest, &sv.next.raw); err != nil {
			return search.Vector{}, false, err
		}
		sv.read = true
	}
	if sv.done || sv.next.pk != pk || sv.next.digest != EmbedDigest(search.EmbedText(d.Text)) {
		return search.Vector{}, false, nil
	}
	v, err := decodeVector(sv.next.raw, sv.dim)
	if err != nil {
		return search.Vector{}, false, nil
	}
	return search.Vector{ID: d.ID, Seq: d.Seq, Values: v}, true, nil
}

func (sv *storedVectors) close() { sv.rows.Close() }

// loadDocs streams the index documents of the listed (not removed) agents
// matching where (all when empty) in pk order: three result sets (agents, skills, queries) ordered by pk
// and merged, so memory stays flat whatever the catalog size. Facets come
// from the agents row (see docFacets).
func (s *Store) loadDocs(ctx context.Context, where string, args []any, fn func(search.Doc)) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	// Annotations are joined by card URL: they are the operator's, kept
	// apart from the card (see annotations.go). Removed agents are never
	// indexed. The skills of a full build need no such filter: the merge
	// below skips skills of agents it does not read.
	agentsQ := "SELECT pk, seq, agents.card_url, name, description, provider, summary, signature_status, signature_trust, publisher_verified, health, works, audit_codes, finding_severities, " +
		"listing, collections, visibility, provenance, policy_failing, n.owner_team, n.classification, n.labels, v.received_at " +
		"FROM agents LEFT JOIN annotations n ON n.card_url = agents.card_url " +
		"LEFT JOIN card_versions v ON v.agent_pk = agents.pk AND v.number = agents.current_version WHERE agents.removed_at IS NULL"
	skillsQ := "SELECT agent_pk, skill_id, name, description, tags, examples, input_modes, output_modes FROM skills"
	if where != "" {
		agentsQ += " AND (" + where + ")"
		skillsQ += " WHERE agent_pk IN (SELECT pk FROM agents WHERE " + where + ")"
		args = append(slices.Clone(args), args...)
	}
	n := strings.Count(where, "?")
	// Rows are read under stmtCtx; the loop below checks ctx.
	query := func(q string, a []any) (*sql.Rows, error) { return s.queryRows(s.stmtCtx(ctx), q, a...) }
	agents, err := query(agentsQ+" ORDER BY pk", args[:n])
	if err != nil {
		return err
	}
	defer agents.Close()
	skills, err := query(skillsQ+" ORDER BY agent_pk, ordinal", args[n:2*n])
	if err != nil {
		return err
	}
	defer skills.Close()
	queries, err := s.entryQueries(ctx, where, args[:n])
	if err != nil {
		return err
	}
	defer queries.rows.Close()
	type skillRow struct {
		pk int64
		st indexedSkill
	}
	var (
		nextSkill  *skillRow
		skillsDone bool
	)
	readSkill := func() error {
		nextSkill = nil
		if skillsDone || !skills.Next() {
			skillsDone = true
			return skills.Err()
		}
		var r skillRow
		var tags, examples, in, out string
		if err := skills.Scan(&r.pk, &r.st.id, &r.st.name, &r.st.description, &tags, &examples, &in, &out); err != nil {
			return err
		}
		if err := r.st.decodeLists(r.pk, tags, examples, in, out); err != nil {
			return err
		}
		nextSkill = &r
		return nil
	}
	if err := readSkill(); err != nil {
		return err
	}
	for i := 0; agents.Next(); i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var (
			pk, seq                                           int64
			cardURL                                           string
			name, desc, provider                              string
			summary, sig, trust, pubVer, health, works, audit string
			severities                                        string
			listing, collections, visibility, prov, failing   string
			owner, class, labels                              sql.NullString
			received                                          sql.NullTime
		)
		if err := agents.Scan(&pk, &seq, &cardURL, &name, &desc, &provider, &summary, &sig, &trust, &pubVer, &health, &works, &audit, &severities,
			&listing, &collections, &visibility, &prov, &failing, &owner, &class, &labels, &received); err != nil {
			return err
		}
		pl, err := storedPlacement(listing, collections, visibility)
		if err != nil {
			return fmt.Errorf("placement of agent %d: %w", pk, err)
		}
		var sks []indexedSkill
		for nextSkill != nil && nextSkill.pk <= pk {
			if nextSkill.pk == pk {
				sks = append(sks, nextSkill.st)
			}
			if err := readSkill(); err != nil {
				return err
			}
		}
		fs, parts, err := storedDocFacets(summary, sig, trust, pubVer, health, works, audit, severities, received.Time, pl, sks)
		if err != nil {
			return fmt.Errorf("facets of agent %d: %w", pk, err)
		}
		af, err := storedAnnotationFacets(owner, class, labels)
		if err != nil {
			return fmt.Errorf("annotations of agent %d: %w", pk, err)
		}
		fs = append(fs, af...)
		fs = append(fs, provenanceFacets(prov)...)
		fs = append(fs, identityFacets(cardURL)...)
		pf, err := policyFacets(failing)
		if err != nil {
			return fmt.Errorf("policy results of agent %d: %w", pk, err)
		}
		fs = append(fs, pf...)
		text, err := queries.textOf(pk, textOfParts(name, desc, provider, sks))
		if err != nil {
			return err
		}
		fn(indexedDoc{pk: pk, seq: seq, sortKey: sortKeyOf(name), facets: fs, parts: parts, text: text}.searchDoc())
	}
	return agents.Err()
}

// decodeLists decodes the JSON lists of agent pk's skills row into st.
func (st *indexedSkill) decodeLists(pk int64, tags, examples, in, out string) error {
	for _, l := range []struct {
		raw, what string
		into      *[]string
	}{{in, "input modes", &st.inputModes}, {out, "output modes", &st.outputModes}, {tags, "tags", &st.tags}, {examples, "examples", &st.examples}} {
		v, err := unmarshalStrings(l.raw)
		if err != nil {
			return fmt.Errorf("skill %s of agent %d: %w", l.what, pk, err)
		}
		*l.into = v
	}
	return nil
}
