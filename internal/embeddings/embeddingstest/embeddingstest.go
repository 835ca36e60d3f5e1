// Package embeddingstest serves a stand-in for an OpenAI-compatible
// embeddings API on loopback, for tests and the relevance benchmark's
// hybrid mode. Its "model" is a hashed bag of words: deterministic, and
// blind to meaning (two texts are near only when they share words), so
// it tests the plumbing, never the value of semantic search.
package embeddingstest

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Model is the model name the server reports in its answers.
const Model = "hash-bag-of-words"

// Server is the fake API. Its knobs may be turned while it serves.
type Server struct {
	*httptest.Server
	// Dim is the length of the vectors it answers.
	Dim atomic.Int64
	// Down makes it answer 503.
	Down atomic.Bool
	// Delay holds every answer back this long (nanoseconds).
	Delay atomic.Int64
	// Requests counts the requests it received, Texts the texts.
	Requests, Texts atomic.Int64

	mu     sync.Mutex
	models []string
	auth   []string
}

// New starts a server answering vectors of dim dimensions at
// {URL}/v1/embeddings; Close stops it.
func New(dim int) *Server {
	s := &Server{}
	s.Dim.Store(int64(dim))
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is what --embeddings-url takes.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

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
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.Texts.Add(int64(len(req.Input)))
	s.mu.Lock()
	s.models = append(s.models, req.Model)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
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
	}{Object: "list", Model: Model}
	// In reverse order: a client must place vectors by their index.
	for i := len(req.Input) - 1; i >= 0; i-- {
		out.Data = append(out.Data, item{"embedding", i, Vector(req.Input[i], int(s.Dim.Load()))})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// Vector is the fake model's vector of text (not normalised): each
// lower-cased word adds one to the dimension its hash picks.
func Vector(text string, dim int) []float64 {
	v := make([]float64, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := fnv.New64a()
		h.Write([]byte(w))
		v[h.Sum64()%uint64(dim)]++
	}
	v[0] += 0.01 // never all zeros
	return v
}
