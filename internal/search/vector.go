package search

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// The semantic layer: beside the words, a document may carry one vector
// (an embedding of EmbedText, normalised to unit length), all of one
// dimension. A query carrying a vector of that dimension is ranked twice,
// by BM25 and by dot product over the documents its filters and scope
// allow, and the two rankings are fused by weighted reciprocal rank fusion
// (Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms
// Condorcet and individual Rank Learning Methods", SIGIR 2009):
//
//	score(d) = Σ weight_r / (K + rank_r(d))
//
// but for one document: the lexical ranking's first, when it matches every
// word of the query, scores Σ weight_r / (K + 1), as if first in both, and
// so stays first (fuse).
//
// Vectors live in one flat slab indexed by document id (dim float32s a
// slot), so a query scans memory in order: 384 dimensions cost 1,536
// bytes per id up to the highest id that has a vector.

// Fusion configures how a query with a vector ranks.
type Fusion struct {
	// LexicalWeight and VectorWeight weigh the two rankings; both zero
	// (the zero Fusion) means 1 each.
	LexicalWeight, VectorWeight float64
	// K damps the weight of the first ranks; zero means 60, the paper's.
	K float64
	// Window is how many of each ranking are fused; zero means 100. The
	// other text matches follow the fused ones, in lexical order.
	Window int
	// MinSimilarity keeps vector hits whose cosine similarity is at least
	// this; documents below it enter the results only by their words.
	MinSimilarity float32
}

// Fusion defaults, documented in docs/operations.md.
const (
	DefaultFusionK      = 60
	DefaultFusionWindow = 100
)

func (f Fusion) withDefaults() Fusion {
	if f.LexicalWeight == 0 && f.VectorWeight == 0 {
		f.LexicalWeight, f.VectorWeight = 1, 1
	}
	if f.K == 0 {
		f.K = DefaultFusionK
	}
	if f.Window <= 0 {
		f.Window = DefaultFusionWindow
	}
	return f
}

// EmbedText is the text of a document that the semantic layer embeds:
// the columns the words are indexed from, most telling first (name, skill
// names, tags, descriptions, examples, a manifest's representative
// queries, provider), one a line. It is the
// one owner of what is embedded; its digest tells whether a stored vector
// is of the document's current text.
func EmbedText(t Text) string {
	var b strings.Builder
	for _, c := range [...]int{ColName, ColSkills, ColTags, ColDescription, ColExamples, ColQueries, ColProvider} {
		s := strings.TrimSpace(t[c])
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}

// Normalize scales v to unit length in place and reports false when it
// cannot be (all zeros, or not finite): such a vector compares to
// nothing.
func Normalize(v []float32) bool {
	var sum float64
	for _, f := range v {
		sum += float64(f) * float64(f)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return true
}

type vectorSet struct {
	// space names the model the vectors are of.
	space string
	dim   int
	data  []float32
	// signs holds each vector's signs, a bit per dimension (words per
	// slot), for the first pass of a large scan (nearest).
	signs []uint64
	words int
	has   []uint64 // bitset by id
	// seqs holds, by id, the version (Doc.Seq) whose text each vector is
	// of, so that the caller can tell a vector still current from one a
	// later version has outdated (VectorSeq).
	seqs []int64
	n    int
}

func (vs *vectorSet) holds(id uint32) bool {
	w := int(id / 64)
	return w < len(vs.has) && vs.has[w]&(1<<(id%64)) != 0
}

// Vector is one document's vector, of the text of its version Seq.
type Vector struct {
	ID     uint32
	Seq    int64
	Values []float32
}

// SetVectors stores vectors of dimension dim made by the model space
// (normalised by the caller). A space or dimension other than the one the
// index holds replaces all it holds: vectors of two models or dimensions
// are never compared. Vectors of another length than dim are skipped.
func (x *Index) SetVectors(space string, dim int, vs []Vector) {
	if dim <= 0 || dim > MaxDimension {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.gen++
	s := x.vectorsOf(space, dim)
	for _, v := range vs {
		if len(v.Values) != dim {
			continue
		}
		id := int(v.ID)
		if need := (id + 1) * dim; need > len(s.data) {
			s.data = slices.Grow(s.data, need-len(s.data))[:need]
		}
		if w := id/64 + 1; w > len(s.has) {
			s.has = slices.Grow(s.has, w-len(s.has))[:w]
		}
		if need := (id + 1) * s.words; need > len(s.signs) {
			s.signs = slices.Grow(s.signs, need-len(s.signs))[:need]
		}
		if need := id + 1; need > len(s.seqs) {
			s.seqs = slices.Grow(s.seqs, need-len(s.seqs))[:need]
		}
		s.seqs[id] = v.Seq
		copy(s.data[id*dim:(id+1)*dim], v.Values)
		signsOf(s.signs[id*s.words:(id+1)*s.words], v.Values)
		if !s.holds(v.ID) {
			s.has[id/64] |= 1 << (id % 64)
			s.n++
		}
	}
}

// ReserveVectors makes room for the vectors of space and dimension dim of
// documents up to maxID, so that SetVectors, given them a batch at a time
// (an index build), fills one slab rather than growing it batch by batch:
// each growth copies all the vectors before it, and at 100,000 agents the
// copies took more than the rest of the vectors' load (2.2 of 2.6 s of CPU
// in a build's profile).
func (x *Index) ReserveVectors(space string, dim int, maxID uint32) {
	if dim <= 0 || dim > MaxDimension {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.vectorsOf(space, dim)
	n := int(maxID) + 1
	s.data = reserve(s.data, n*dim)
	s.signs = reserve(s.signs, n*s.words)
	s.has = reserve(s.has, n/64+1)
	s.seqs = reserve(s.seqs, n)
}

// vectorsOf returns the index's vector set, emptied first when it holds
// another space or dimension than these. The caller holds the write lock.
func (x *Index) vectorsOf(space string, dim int) *vectorSet {
	if x.vec.dim != dim || x.vec.space != space {
		x.gen++
		x.vec = vectorSet{space: space, dim: dim, words: (dim + 63) / 64}
	}
	return &x.vec
}

// reserve returns s with room for n elements in all.
func reserve[E any](s []E, n int) []E {
	if n > cap(s) {
		return slices.Grow(s, n-len(s))
	}
	return s
}

// dropVector forgets a removed document's vector. The caller holds the
// write lock.
func (x *Index) dropVector(id uint32) {
	s := &x.vec
	if s.holds(id) {
		s.has[id/64] &^= 1 << (id % 64)
		s.n--
		clear(s.data[int(id)*s.dim : int(id+1)*s.dim])
		clear(s.signs[int(id)*s.words : int(id+1)*s.words])
		s.seqs[id] = 0
	}
}

// VectorState says how much of the index the semantic layer covers.
type VectorState struct {
	// Space and Dimension are those of the vectors held; zero when none
	// were set.
	Space     string
	Dimension int
	// Embedded counts the present documents that have a vector; Docs all
	// present documents.
	Embedded, Docs int
	// Bytes is the memory of the vector slab.
	Bytes int
}

// VectorState reports the semantic layer's coverage.
func (x *Index) VectorState() VectorState {
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := VectorState{Space: x.vec.space, Dimension: x.vec.dim, Docs: len(x.all), Bytes: 4*cap(x.vec.data) + 8*cap(x.vec.signs) + 8*cap(x.vec.has) + 8*cap(x.vec.seqs)}
	if x.vec.n == 0 {
		return st
	}
	for _, id := range x.all {
		if x.vec.holds(id) {
			st.Embedded++
		}
	}
	return st
}

// VectorSeq returns the version whose text document id's vector of
// space and dim is of (Vector.Seq); false when it has none.
func (x *Index) VectorSeq(id uint32, space string, dim int) (int64, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.vec.space != space || x.vec.dim != dim || !x.vec.holds(id) {
		return 0, false
	}
	return x.vec.seqs[id], true
}

// Similarity is the cosine similarity of document id's vector to q, a
// normalised vector of the model space; false when the document has no
// vector of that model and length.
func (x *Index) Similarity(id uint32, space string, q []float32) (float32, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := &x.vec
	if s.space != space || len(q) != s.dim || !s.holds(id) {
		return 0, false
	}
	return dot(q, s.data[int(id)*s.dim:int(id+1)*s.dim]), true
}

type simHit struct {
	id  uint32
	sim float32
}

func bySim(a, b simHit) int {
	if a.sim != b.sim {
		return cmp.Compare(b.sim, a.sim)
	}
	return cmp.Compare(a.id, b.id)
}

// exactBelow is the number of candidates up to which nearest compares
// every vector in full; above it, a first pass ranks them by the Hamming
// distance of their signs (48 bytes a vector at 384 dimensions against
// 1,536) and only the best oversample × k, at least minRescore, are
// compared in full. Measured at 100,000 documents of 384 dimensions
// (BenchmarkHybrid): the full scan took about 25 ms of CPU a query, the
// two passes about 6 (4 since bySigns counts rather than keeps a heap),
// finding 76% of the exact ten nearest on random vectors (87% when 4,000
// are compared in full, at 9 ms).
const (
	exactBelow = 10_000
	oversample = 10
	minRescore = 2000
)

// nearest returns the k documents of ids (sorted) with a vector most
// similar to q, at least min, best first. The caller holds x.mu for
// reading.
func (x *Index) nearest(q []float32, ids []uint32, k int, minSim float32) []simHit {
	s := &x.vec
	if len(ids) > exactBelow {
		ids = x.bySigns(q, ids, max(k*oversample, minRescore))
	}
	h := &topK[simHit]{k: k, order: bySim}
	dim := s.dim
	worst := float32(math.Inf(-1))
	for _, id := range ids {
		w := int(id / 64)
		if w >= len(s.has) {
			break // ids ascend: none further has a vector
		}
		if s.has[w]&(1<<(id%64)) == 0 {
			continue
		}
		sim := dot(q, s.data[int(id)*dim:int(id+1)*dim])
		if sim < minSim || (len(h.items) == k && sim < worst) {
			continue
		}
		h.offer(simHit{id, sim})
		if len(h.items) == k {
			worst = h.items[0].sim
		}
	}
	return h.sorted()
}

// bySigns returns, in id order, the n documents of ids with a vector
// whose signs differ least from q's (a sign-bit sketch of the angle
// between them: Charikar, "Similarity estimation techniques from rounding
// algorithms", STOC 2002), ties going to the lower ids. It selects them
// by counting rather than with a heap: one pass notes each candidate's
// distance and counts how many lie at each, which gives the largest
// distance kept; a second keeps those below it and the first at it. A
// heap of thousands took three fifths of the pass in offers
// (BenchmarkHybrid's profile).
func (x *Index) bySigns(q []float32, ids []uint32, n int) []uint32 {
	s := &x.vec
	qs := make([]uint64, s.words)
	signsOf(qs, q)
	hams := getHams(len(ids))
	defer hamsPool.Put(&hams)
	hist := make([]int, s.words*64+1)
	seen := 0
	for i, id := range ids {
		w := int(id / 64)
		if w >= len(s.has) {
			break // ids ascend: none further has a vector
		}
		seen = i + 1
		if s.has[w]&(1<<(id%64)) == 0 {
			hams[i] = noHam
			continue
		}
		ham := 0
		for j, b := range s.signs[int(id)*s.words : int(id+1)*s.words] {
			ham += bits.OnesCount64(b ^ qs[j])
		}
		hams[i] = uint16(ham)
		hist[ham]++
	}
	// limit: the largest distance kept; ties, how many at it are.
	limit, ties, below := len(hist), 0, 0
	for d, c := range hist {
		if below+c >= n {
			limit, ties = d, n-below
			break
		}
		below += c
	}
	out := make([]uint32, 0, min(n, seen))
	for i, id := range ids[:seen] {
		switch h := int(hams[i]); {
		case h < limit:
			out = append(out, id)
		case h == limit && ties > 0:
			out = append(out, id)
			ties--
		}
	}
	return out
}

// noHam marks, in bySigns' distances, a candidate without a vector: above
// any distance (at most MaxDimension rounded up to 64).
const noHam = math.MaxUint16

// MaxDimension is the largest dimension of the vectors the index keeps
// (SetVectors ignores others): bySigns counts distances in 16 bits.
const MaxDimension = 1 << 15

// hamsPool recycles bySigns' distances, one per candidate.
var hamsPool sync.Pool

func getHams(n int) []uint16 {
	if p, ok := hamsPool.Get().(*[]uint16); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]uint16, n, n+n/4)
}

// signsOf sets a bit of dst for each positive value of v.
func signsOf(dst []uint64, v []float32) {
	clear(dst)
	for i, f := range v {
		if f > 0 {
			dst[i/64] |= 1 << (i % 64)
		}
	}
}

// dot is the dot product of two vectors of one length, in four lanes so
// that the multiplications of one step do not wait on each other.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i]*b[i] + a[i+4]*b[i+4]
		s1 += a[i+1]*b[i+1] + a[i+5]*b[i+5]
		s2 += a[i+2]*b[i+2] + a[i+6]*b[i+6]
		s3 += a[i+3]*b[i+3] + a[i+7]*b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// hybrid reports whether q is ranked with its vector: it has a vector
// of the space and dimension the index holds, and the index holds some.
func (x *Index) hybrid(q *Query) bool {
	return len(q.Vector) > 0 && q.VectorSpace == x.vec.space && len(q.Vector) == x.vec.dim && x.vec.n > 0
}

// fuse ranks a hybrid query: the first Window hits of the lexical ranking
// (over the text matches ms) and of the vector ranking (vecs) by their
// fused score, marked Fused, the lexical first leading them when it matches
// every word; then the other text matches in lexical order.
// It returns at most k hits after the cursor. The caller holds x.mu for
// reading.
func (x *Index) fuse(qws []queryWord, ms []match, vecs []simHit, demoted []uint32, key uint64, k int, after *Hit, f Fusion) []Hit {
	// On a first page, one lexical ranking serves both the fused window
	// and the tail after it: the tail is the ranking past the window,
	// less the vector hits it holds, so ranking Window + k + (vector hits
	// among the text matches) places is enough. Ranking the window and
	// then the rest apart scored most matches twice.
	depth := f.Window
	if after == nil {
		depth += k
		for _, v := range vecs {
			if _, ok := slices.BinarySearchFunc(ms, v.id, byMatchID); ok {
				depth++
			}
		}
	}
	ranked, _ := x.rank(qws, ms, demoted, key, depth, nil, true)
	lex := ranked[:min(len(ranked), f.Window)]
	cands := make(map[uint32]*Hit, len(lex)+len(vecs))
	for i, h := range lex {
		cands[h.ID] = &Hit{ID: h.ID, Demoted: h.Demoted, Exact: h.Exact, Fused: true, LexicalRank: i + 1,
			Score: f.LexicalWeight / (f.K + float64(i+1))}
	}
	for i, v := range vecs {
		c, ok := cands[v.id]
		if !ok {
			_, d := slices.BinarySearch(demoted, v.id)
			// The exact matches rank first lexically, so one beyond the
			// lexical window is rare, but it stays exact.
			exact := false
			if x.exact(v.id, key) {
				j, found := slices.BinarySearchFunc(ms, v.id, byMatchID)
				exact = found && ms[j].mask == uint32(1)<<len(qws)-1
			}
			c = &Hit{ID: v.id, Demoted: d, Exact: exact, Fused: true}
			cands[v.id] = c
		}
		c.VectorRank, c.Similarity = i+1, v.sim
		c.Score += f.VectorWeight / (f.K + float64(i+1))
	}
	if len(lex) > 0 && !lex[0].Partial && f.LexicalWeight > 0 {
		// Rank fusion sees places, not scores: a document first by its
		// words and matching all of them (issue #22: "an exact or
		// all-terms match still ranks first") could fall behind two that
		// only the vector ranking likes. It scores as if it were first in
		// both rankings, which no other document can reach.
		c := cands[lex[0].ID]
		c.Score = (f.LexicalWeight + f.VectorWeight) / (f.K + 1)
	}
	out := make([]Hit, 0, k+len(cands))
	for _, c := range cands {
		if after == nil || byScore(*c, *after) > 0 {
			out = append(out, *c)
		}
	}
	// The rest of the text matches, past the fused ones.
	if after == nil {
		tail := 0
		for _, h := range ranked[len(lex):] {
			if _, ok := cands[h.ID]; !ok && tail < k {
				out = append(out, h)
				tail++
			}
		}
	} else {
		rest := make([]match, 0, len(ms))
		for _, m := range ms {
			if _, ok := cands[m.id]; !ok {
				rest = append(rest, m)
			}
		}
		tailAfter := after
		if after.Fused {
			// The cursor is among the fused hits of its group: the tail of
			// that group begins after all of them.
			tailAfter = &Hit{Demoted: after.Demoted, Exact: after.Exact, Score: math.Inf(1)}
		}
		tail, _ := x.rank(qws, rest, demoted, key, k, tailAfter, true)
		out = append(out, tail...)
	}
	slices.SortFunc(out, byScore)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// unionIDs merges sorted ids with the ids of vecs.
func unionIDs(ids []uint32, vecs []simHit) []uint32 {
	extra := make([]uint32, 0, len(vecs))
	for _, v := range vecs {
		if _, ok := slices.BinarySearch(ids, v.id); !ok {
			extra = append(extra, v.id)
		}
	}
	if len(extra) == 0 {
		return ids
	}
	slices.Sort(extra)
	out := make([]uint32, 0, len(ids)+len(extra))
	i, j := 0, 0
	for i < len(ids) || j < len(extra) {
		if j == len(extra) || (i < len(ids) && ids[i] < extra[j]) {
			out = append(out, ids[i])
			i++
		} else {
			out = append(out, extra[j])
			j++
		}
	}
	return out
}
