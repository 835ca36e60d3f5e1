// Package search is the catalog's in-memory search engine: an inverted
// index of words ranked by BM25 for full-text search, and one of
// (field, value) terms for filters and facet counts, with top-k paging.
// It knows nothing of databases: the catalog feeds it documents (Apply,
// Remove) and asks it queries (Search). A document may have parts (an
// agent's skills): filters on the fields of parts must be met by one part
// together, and facet counts follow the parts that met them (parts.go).
//
// Documents are keyed by a dense uint32 id (the catalog's agent pk) and
// ordered by a sequence number: the index never replaces a document with
// an older or equal one, nor revives one removed at a later sequence, so
// writers, replica syncs and the initial build may deliver them in any
// order. An update applies only what changed between the old and the new
// document, holding the write lock for microseconds, and batches release
// the lock between short slices so searches never wait long behind them.
package search

import "errors"

// ErrNotReady is returned by Search until the initial build has finished
// (see Index.MarkReady): a partial index would answer with silently
// missing results.
var ErrNotReady = errors.New("search: index is not ready")

// Facet is one (field, value) term of a document: a filterable, and for
// the fields named in Options.FacetFields countable, property.
type Facet struct {
	Field, Value string
}

// Text columns, each with its BM25 weight: a word in the name or a
// skill's name says more about a document than one in a tag, a tag more
// than the description, and the description more than an example prompt
// (which repeats the user's words for what the skill does, but also
// carries sample data: city names, amounts). Queries are the questions a
// publisher's manifest says an agent answers (ARD's representativeQueries):
// users' words as the examples are, without the sample data.
const (
	ColName = iota
	ColTags
	ColSkills
	ColDescription
	ColProvider
	ColExamples
	ColQueries
	NumCols
)

// Text is a document's searchable text, by column.
type Text [NumCols]string

var colWeights = [NumCols]float64{4, 2.5, 4, 1.5, 1.5, 0.75, 1}

// Doc is what the index holds of one document.
type Doc struct {
	ID uint32
	// Seq orders versions of one document; see the package doc.
	Seq int64
	// SortKey orders results of queries without text.
	SortKey string
	Facets  []Facet
	// Parts are the document's parts (an agent's skills), each with its
	// own terms; the document carries every part's terms as it carries
	// Facets. Filters on Options.PartFields must be met by one part
	// together (see parts.go).
	Parts [][]Facet
	Text  Text
}

// Options configure an index.
type Options struct {
	// FacetFields lists the fields facet counts are reported for, in the
	// order results list them; other fields only filter.
	FacetFields []string
	// PartFields lists the fields whose values belong to a document's
	// parts rather than to the whole of it (an agent's skill ids and
	// names and their media types). A value of one of them given in Facets
	// belongs to every part; a value of another field given in a part, to
	// the whole document.
	PartFields []string
}
