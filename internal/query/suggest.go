package query

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// Suggestion is a filter the words of a search seem to ask for: Words is
// the text that suggested it, as the caller typed it. Doors show it
// beside the results for the caller to add; the search itself is never
// rewritten, since "accepts PDF" may as well mean an agent whose
// description says so.
type Suggestion struct {
	Field, Value, Words string
}

// maxSuggestions bounds what one search suggests.
const maxSuggestions = 8

// A word of the text: lower-cased, with its span in the original.
type word struct {
	w          string
	start, end int
}

// words splits text into runs of letters, digits and the joiners media
// types, bindings and versions are written with ("HTTP+JSON",
// "JSON-RPC", "v0.3"); a joiner at either end of a run is dropped.
func words(text string) []word {
	var out []word
	isPart := func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(".+-/", r)
	}
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		s, e := start, end
		for s < e && strings.ContainsRune(".+-/", rune(text[s])) {
			s++
		}
		for e > s && strings.ContainsRune(".+-/", rune(text[e-1])) {
			e--
		}
		if s < e {
			out = append(out, word{w: strings.ToLower(text[s:e]), start: s, end: e})
		}
		start = -1
	}
	for i, r := range text {
		if isPart(r) {
			if start < 0 {
				start = i
			}
		} else {
			flush(i)
		}
	}
	flush(len(text))
	return out
}

// Cues before a media word: what the agent takes, and what it gives.
var (
	inputCues = []string{"accept", "accepts", "accepting", "take", "takes", "taking", "read", "reads", "reading",
		"ingest", "ingests", "consume", "consumes", "upload", "uploads", "from", "input", "inputs", "parse", "parses"}
	outputCues = []string{"return", "returns", "returning", "output", "outputs", "produce", "produces", "producing",
		"generate", "generates", "generating", "emit", "emits", "export", "exports", "into", "respond", "responds", "give", "gives"}
)

// mediaWords map a word naming a kind of content onto the media type
// (RFC 6838) or range ("image/*", as the filter matches them) it means.
var mediaWords = map[string]string{
	"pdf": "application/pdf", "pdfs": "application/pdf",
	"json": "application/json", "xml": "application/xml",
	"csv": "text/csv", "html": "text/html", "markdown": "text/markdown",
	"text": "text/plain", "image": "image/*", "images": "image/*", "png": "image/png",
	"jpeg": "image/jpeg", "jpg": "image/jpeg", "picture": "image/*", "pictures": "image/*", "photo": "image/*",
	"photos": "image/*", "audio": "audio/*", "sound": "audio/*", "speech": "audio/*", "video": "video/*", "videos": "video/*",
}

// mediaNouns may follow a media word as part of the same phrase ("reads
// PDF files"): they are part of the words that suggested the filter.
var mediaNouns = []string{"file", "files", "document", "documents", "input", "output"}

// fillers may stand between a cue and its media word ("accepts a PDF",
// "returns structured JSON" is not matched: an adjective could be a name).
var fillers = []string{"a", "an", "the", "any", "some", "and", "or", "in", "as", "back"}

// versionRe is a protocol version as people write it: "v0.3", "1.0",
// "0.3.0". Only major.minor is kept, which is how cards are faceted.
var versionRe = regexp.MustCompile(`^v?(\d{1,2})\.(\d{1,2})(?:\.\d{1,3})?$`)

// Suggest finds phrases in text that name a media type, a binding, a
// protocol version or a security scheme, as filters to offer. Filters
// the request already has are not suggested again. The phrases are
// narrow on purpose: a word alone ("pdf", "rest", "1.0") may be part of
// a name or of plain English, so each needs a cue ("accepts PDF",
// "REST API", "A2A 1.0") unless it can mean nothing else ("gRPC").
func Suggest(text string, have map[string][]string) []Suggestion {
	ws := words(text)
	var out []Suggestion
	add := func(field, value string, from, to int) {
		if len(out) >= maxSuggestions || slices.ContainsFunc(have[field], func(v string) bool { return strings.EqualFold(v, value) }) {
			return
		}
		for _, s := range out {
			if s.Field == field && s.Value == value {
				return
			}
		}
		out = append(out, Suggestion{Field: field, Value: value, Words: text[ws[from].start:ws[to].end]})
	}
	at := func(i int) string {
		if i < 0 || i >= len(ws) {
			return ""
		}
		return ws[i].w
	}
	for i := range ws {
		w := ws[i].w
		// Media types: a cue, at most one filler, then the media word.
		var field string
		switch {
		case slices.Contains(inputCues, w):
			field = catalog.FieldInputMode
		case slices.Contains(outputCues, w):
			field = catalog.FieldOutputMode
		}
		if field != "" {
			j := i + 1
			if slices.Contains(fillers, at(j)) {
				j++
			}
			if mt, ok := mediaWords[at(j)]; ok {
				to := j
				if slices.Contains(mediaNouns, at(j+1)) {
					to = j + 1
				}
				add(field, mt, i, to)
			}
		}
		// Bindings.
		switch {
		case w == "grpc":
			add(catalog.FieldBinding, card.BindingGRPC, i, i)
		case w == "json-rpc" || w == "jsonrpc":
			add(catalog.FieldBinding, card.BindingJSONRPC, i, i)
		case w == "http+json" || w == "restful":
			add(catalog.FieldBinding, card.BindingHTTPJSON, i, i)
		case w == "rest" && (at(i+1) == "api" || at(i-1) == "over" || at(i-1) == "via"):
			// "the rest of" is English; "REST API", "over REST" are not.
			from, to := i, i
			if at(i+1) == "api" {
				to = i + 1
			} else {
				from = i - 1
			}
			add(catalog.FieldBinding, card.BindingHTTPJSON, from, to)
		}
		// Protocol versions: "v0.3" alone, or a number after "A2A",
		// "version" or "protocol".
		if m := versionRe.FindStringSubmatch(w); m != nil {
			cued := strings.HasPrefix(w, "v")
			from := i
			if p := at(i - 1); p == "a2a" || p == "version" || p == "protocol" {
				cued, from = true, i-1
			}
			if cued {
				add(catalog.FieldProtocolVersion, m[1]+"."+m[2], from, i)
			}
		}
		// Security schemes.
		switch {
		case (w == "no" || w == "without") && (at(i+1) == "auth" || at(i+1) == "authentication"):
			add(catalog.FieldSecurityScheme, "none", i, i+1)
		case w == "unauthenticated":
			add(catalog.FieldSecurityScheme, "none", i, i)
		case w == "oauth" || w == "oauth2":
			add(catalog.FieldSecurityScheme, card.SchemeOAuth2, i, i)
		case w == "api" && (at(i+1) == "key" || at(i+1) == "keys"), w == "api-key", w == "apikey":
			to := i
			if w == "api" {
				to = i + 1
			}
			add(catalog.FieldSecurityScheme, card.SchemeAPIKey, i, to)
		case w == "oidc" || w == "openid":
			add(catalog.FieldSecurityScheme, card.SchemeOpenIDConnect, i, i)
		case w == "mtls" || (w == "mutual" && at(i+1) == "tls"):
			to := i
			if w == "mutual" {
				to = i + 1
			}
			add(catalog.FieldSecurityScheme, card.SchemeMutualTLS, i, to)
		}
	}
	return out
}
