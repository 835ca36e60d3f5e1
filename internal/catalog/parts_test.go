package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// skillsCard is a v0.3 card whose skills are given as JSON.
func skillsCard(name, skills string) string {
	return fmt.Sprintf(`{"name":%q,"description":"d","url":"https://%s.example/a2a","version":"1","protocolVersion":"0.3.0",
		"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":%s}`, name, name, skills)
}

// Filters on a skill and on media types describe one skill: an agent whose
// one skill takes a PDF and whose other is the skill asked for is no match,
// and the facet counts follow the skills that matched. A skill without
// media types of its own has the card's defaults. The index built from the
// database answers as the one the writes kept current.
func TestSkillAndMediaTypesMeetInOneSkill(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			live := catalogtest.Open(t, d)
			ctx := context.Background()
			ids := map[string]string{}
			for _, c := range []struct{ name, skills string }{
				// ocr takes the PDF; translate, the skill asked for, inherits text/plain.
				{"split", `[{"id":"ocr","name":"OCR","description":"d","tags":["t"],"inputModes":["application/pdf"],"outputModes":["application/json"]},
					{"id":"translate","name":"Translate","description":"d","tags":["t"]}]`},
				// translate itself takes the PDF.
				{"whole", `[{"id":"translate","name":"Translate","description":"d","tags":["t"],"inputModes":["application/pdf","text/plain"]},
					{"id":"chat","name":"Chat","description":"d","tags":["t"],"inputModes":["text/html"]}]`},
			} {
				ids[c.name] = upsert(t, live, "https://"+c.name+".example/.well-known/agent-card.json", skillsCard(c.name, c.skills)).Agent.ID
			}
			if err := live.WarmIndex(ctx); err != nil {
				t.Fatal(err)
			}
			rebuilt := catalogtest.Open(t, d)
			tests := []struct {
				filters    map[string][]string
				want       []string
				wantSkills []catalog.FacetCount
				wantInput  []catalog.FacetCount
				wantOutput []catalog.FacetCount
			}{
				{
					filters:    map[string][]string{catalog.FieldSkill: {"translate"}, catalog.FieldInputMode: {"application/pdf"}},
					want:       []string{ids["whole"]},
					wantSkills: []catalog.FacetCount{{Value: "translate", Count: 1}},
					wantInput:  []catalog.FacetCount{{Value: "application/pdf", Count: 1}, {Value: "text/plain", Count: 1}},
					wantOutput: []catalog.FacetCount{{Value: "text/plain", Count: 1}},
				},
				{
					// By the skill's name, and an inherited media type.
					filters:    map[string][]string{catalog.FieldSkill: {"Translate"}, catalog.FieldInputMode: {"text/*"}},
					want:       []string{ids["split"], ids["whole"]},
					wantSkills: []catalog.FacetCount{{Value: "translate", Count: 2}},
					wantInput:  []catalog.FacetCount{{Value: "text/plain", Count: 2}, {Value: "application/pdf", Count: 1}},
					wantOutput: []catalog.FacetCount{{Value: "text/plain", Count: 2}},
				},
				{
					// Input and output media types of one skill.
					filters:    map[string][]string{catalog.FieldInputMode: {"text/plain"}, catalog.FieldOutputMode: {"application/json"}},
					want:       nil,
					wantSkills: []catalog.FacetCount{},
					wantInput:  []catalog.FacetCount{},
					wantOutput: []catalog.FacetCount{},
				},
				{
					filters:    map[string][]string{catalog.FieldInputMode: {"application/pdf"}},
					want:       []string{ids["split"], ids["whole"]},
					wantSkills: []catalog.FacetCount{{Value: "ocr", Count: 1}, {Value: "translate", Count: 1}},
					wantInput:  []catalog.FacetCount{{Value: "application/pdf", Count: 2}, {Value: "text/plain", Count: 1}},
					wantOutput: []catalog.FacetCount{{Value: "application/json", Count: 1}, {Value: "text/plain", Count: 1}},
				},
			}
			for _, tc := range tests {
				for storeName, s := range map[string]*catalog.Store{"live": live, "rebuilt": rebuilt} {
					p, err := s.Search(ctx, catalog.Query{Filters: tc.filters, Limit: 10})
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, it := range p.Items {
						got = append(got, it.ID)
					}
					slices.Sort(got)
					want := slices.Sorted(slices.Values(tc.want))
					if !slices.Equal(got, want) || p.Total != len(want) {
						t.Errorf("%s %v: agents %v (total %d), want %v", storeName, tc.filters, got, p.Total, want)
					}
					for field, want := range map[string][]catalog.FacetCount{catalog.FieldSkill: tc.wantSkills,
						catalog.FieldInputMode: tc.wantInput, catalog.FieldOutputMode: tc.wantOutput} {
						if !slices.Equal(p.Facets[field], want) {
							t.Errorf("%s %v: %s facet %v, want %v", storeName, tc.filters, field, p.Facets[field], want)
						}
					}
				}
			}
		})
	}
}
