package embeddingstest

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

func TestProjection(t *testing.T) {
	const dim = 384
	invoice := "Invoice reader: extracts totals and line items from PDF invoices"
	v := Projection(invoice, dim)
	if len(v) != dim {
		t.Fatalf("length %d, want %d", len(v), dim)
	}
	if !slices.Equal(v, Projection(invoice, dim)) {
		t.Error("the same text gave two vectors")
	}
	var norm float64
	pos := 0
	for _, f := range v {
		norm += f * f
		if f > 0 {
			pos++
		}
	}
	if math.Abs(norm-1) > 1e-9 {
		t.Errorf("squared norm %g, want 1", norm)
	}
	// A real model's vectors have both signs in about half the
	// dimensions each; Vector's have none negative.
	if pos < dim/4 || pos > 3*dim/4 {
		t.Errorf("%d of %d values positive, want mixed signs", pos, dim)
	}
	similar := cosine(v, Projection("extract the totals from a PDF invoice", dim))
	unrelated := cosine(v, Projection("schedule a meeting with the whole team next week", dim))
	if similar < 0.3 || similar <= unrelated+0.2 {
		t.Errorf("cosine to a similar text %.3f, to an unrelated one %.3f: want the similar one clearly closer", similar, unrelated)
	}
	if math.Abs(unrelated) > 0.3 {
		t.Errorf("cosine to an unrelated text %.3f, want near 0", unrelated)
	}
	if e := Projection("  ", dim); e[0] != 1 {
		t.Errorf("a text without words gave %v..., want a unit vector", e[:3])
	}
}

func TestProjectionServer(t *testing.T) {
	s := NewProjection(64)
	defer s.Close()
	body := `{"model":"m","input":["find an invoice agent","book a hotel"]}`
	resp, err := http.Post(s.BaseURL()+"/embeddings", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Model string `json:"model"`
		Data  []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Model != ProjectionModel || s.ModelName() != ProjectionModel || len(out.Data) != 2 {
		t.Fatalf("answer %+v", out)
	}
	for _, d := range out.Data {
		want := Projection([]string{"find an invoice agent", "book a hotel"}[d.Index], 64)
		for i := range want {
			if math.Abs(d.Embedding[i]-want[i]) > 1e-12 {
				t.Fatalf("vector %d differs from Projection at %d: %g, want %g", d.Index, i, d.Embedding[i], want[i])
			}
		}
	}
}
