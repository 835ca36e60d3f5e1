// Package embeddingstest serves a stand-in for an OpenAI-compatible
// embeddings API on loopback, for tests and the benchmarks' hybrid modes.
// Its "models" are hashed bags of words: deterministic, and blind to
// meaning (two texts are near only when they share words), so they test
// the plumbing and the cost, never the value of semantic search.
package embeddingstest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Model names New's model (Vector), ProjectionModel NewProjection's
// (Projection).
const (
	Model           = "hash-bag-of-words"
	ProjectionModel = "hash-projection"
)

// Server is the fake API. Its knobs may be turned while it serves.
type Server struct {
	*httptest.Server
	// Dim is the length of the vectors it answers.
	Dim atomic.Int64
	// Down makes it answer 503.
	Down atomic.Bool
	// Delay holds every answer back this long (nanoseconds), or until the
	// client gives up.
	Delay atomic.Int64
	// Requests counts the requests it received, Texts the texts.
	Requests, Texts atomic.Int64

	// model and embed are the model's name and vectors.
	model string
	embed func(text string, dim int) []float64

	mu     sync.Mutex
	models []string
	auth   []string
	inputs []string
}

// New starts a server answering Vector's vectors of dim dimensions at
// {URL}/v1/embeddings; Close stops it.
func New(dim int) *Server {
	return start(dim, Model, Vector)
}

// NewProjection starts a server answering Projection's vectors: dense,
// with mixed signs, as a real model's are, so that the index's sign-bit
// first pass and its memory work as they would with one.
func NewProjection(dim int) *Server {
	return start(dim, ProjectionModel, Projection)
}

func start(dim int, model string, embed func(string, int) []float64) *Server {
	s := &Server{model: model, embed: embed}
	s.Dim.Store(int64(dim))
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// ModelName is the name of the model the server answers with.
func (s *Server) ModelName() string { return s.model }

// BaseURL is what --embeddings-url takes.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Inputs returns the texts of the requests so far, in order.
func (s *Server) Inputs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.inputs...)
}

// Seen returns the model names and Authorization headers of the requests
// so far.
func (s *Server) Seen() (models, auth []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.models...), append([]string(nil), s.auth...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	// The body is read before the delay: net/http notices a client that
	// gives up (and ends the request's context) only once it has.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if d := time.Duration(s.Delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	if s.Down.Load() {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.Texts.Add(int64(len(req.Input)))
	s.mu.Lock()
	s.models = append(s.models, req.Model)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.inputs = append(s.inputs, req.Input...)
	s.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Model  string `json:"model"`
		Data   []item `json:"data"`
	}{Object: "list", Model: s.model}
	// In reverse order: a client must place vectors by their index.
	for i := len(req.Input) - 1; i >= 0; i-- {
		out.Data = append(out.Data, item{"embedding", i, s.embed(req.Input[i], int(s.Dim.Load()))})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// Vector is the fake model's vector of text (not normalised): each
// lower-cased word adds one to the dimension its hash picks.
func Vector(text string, dim int) []float64 {
	v := make([]float64, dim)
	for _, w := range words(text) {
		v[wordHash(w)%uint64(dim)]++
	}
	v[0] += 0.01 // never all zeros
	return v
}

// Projection is the projection model's vector of text, of unit length:
// each lower-cased word stands for a direction of ±1 in every dimension,
// drawn from its hash, and the text's vector is the sum of its words'
// (a random projection of its bag of words: Achlioptas, "Database-friendly
// random projections", PODS 2001). Texts sharing words point alike; texts
// sharing none are near orthogonal (cosine about ±1/√dim).
func Projection(text string, dim int) []float64 {
	v := make([]float64, dim)
	for _, w := range words(text) {
		state := wordHash(w)
		for i := 0; i < dim; i += 64 {
			bits := splitmix64(&state)
			for j := i; j < min(i+64, dim); j++ {
				v[j] += float64(int(bits&1)*2 - 1)
				bits >>= 1
			}
		}
	}
	var sum float64
	for _, f := range v {
		sum += f * f
	}
	if sum == 0 {
		v[0] = 1 // a text without words: still a unit vector
		return v
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] *= inv
	}
	return v
}

func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func wordHash(w string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(w))
	return h.Sum64()
}

// splitmix64 is Steele, Lea and Flood's generator ("Fast splittable
// pseudorandom number generators", OOPSLA 2014): a word's hash seeds the
// stream of its direction's signs.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
