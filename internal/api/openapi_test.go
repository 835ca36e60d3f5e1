package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/contentscan"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/sources"
	"github.com/a2aregistry/registry/internal/verify"
)

var spec struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// loadSpec parses and validates openapi.json once for the whole package.
func loadSpec(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	spec.once.Do(func() {
		// SARIF is JSON (OASIS SARIF v2.1.0 §3.1); the validator knows
		// only the +json types it registers itself.
		openapi3filter.RegisterBodyDecoder("application/sarif+json", openapi3filter.JSONBodyDecoder)
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(openAPIDoc)
		if err != nil {
			spec.err = err
			return
		}
		if err := doc.Validate(loader.Context); err != nil {
			spec.err = err
			return
		}
		spec.doc = doc
		spec.router, spec.err = gorillamux.NewRouter(doc)
	})
	if spec.err != nil {
		t.Fatalf("openapi.json: %v", spec.err)
	}
	return spec.doc, spec.router
}

func TestOpenAPIDocumentValidates(t *testing.T) {
	doc, _ := loadSpec(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
}

// checkConformance replays one exchange against the document: the
// response must be documented for its status and match its schema; a
// request the handler accepted must be one the document accepts.
func checkConformance(t *testing.T, method, target, body string, header map[string]string, rec *httptest.ResponseRecorder) {
	t.Helper()
	_, router := loadSpec(t)
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		if !errors.Is(err, routers.ErrPathNotFound) && !errors.Is(err, routers.ErrMethodNotAllowed) {
			t.Fatalf("finding route of %s %s: %v", method, target, err)
		}
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s is not in the document but answered %d", method, target, rec.Code)
		}
		checkErrorSchema(t, rec.Body.Bytes())
		return
	}
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if rec.Code < http.StatusBadRequest {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("handler accepted %s %s, which the document rejects: %v", method, target, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("response %d to %s %s does not match the document: %v\nbody: %.2000s", rec.Code, method, target, err, rec.Body)
	}
}

func checkErrorSchema(t *testing.T, body []byte) {
	t.Helper()
	doc, _ := loadSpec(t)
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("error body is not JSON: %v: %q", err, body)
	}
	if err := doc.Components.Schemas["Error"].Value.VisitJSON(v); err != nil {
		t.Errorf("error body does not match the Error schema: %v: %s", err, body)
	}
}

// TestErrorCodesDocumented compares the Code* constants of errors.go with
// the Error schema's enum, so adding a code without documenting it fails.
func TestErrorCodesDocumented(t *testing.T) {
	doc, _ := loadSpec(t)
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if strings.HasPrefix(name.Name, "Code") {
					lit := vs.Values[i].(*ast.BasicLit)
					codes = append(codes, strings.Trim(lit.Value, `"`))
				}
			}
		}
	}
	var documented []string
	for _, v := range doc.Components.Schemas["Error"].Value.Properties["error"].Value.Properties["code"].Value.Enum {
		documented = append(documented, v.(string))
	}
	sort.Strings(codes)
	sort.Strings(documented)
	if !slices.Equal(codes, documented) {
		t.Errorf("error codes in errors.go %v\n differ from the document %v", codes, documented)
	}
}

func TestSearchParametersDocumented(t *testing.T) {
	doc, _ := loadSpec(t)
	op := doc.Paths.Value("/agents").Get
	var documented []string
	for _, p := range op.Parameters {
		documented = append(documented, p.Value.Name)
	}
	want := append([]string{query.ParamText, paramLimit, paramCursor, query.ParamExplain, query.ParamKeyChangedSince}, catalog.FilterFields...)
	sort.Strings(documented)
	sort.Strings(want)
	if !slices.Equal(documented, want) {
		t.Errorf("documented search parameters %v, handler accepts %v", documented, want)
	}

	facets := doc.Components.Schemas["Facets"].Value
	var props []string
	for name := range facets.Properties {
		props = append(props, name)
	}
	fields := slices.Clone(catalog.FilterFields)
	sort.Strings(props)
	sort.Strings(fields)
	if !slices.Equal(props, fields) || len(facets.Required) != len(fields) {
		t.Errorf("Facets properties %v (required %v), want %v", props, facets.Required, fields)
	}

	for _, field := range query.EnumFields() {
		values := query.EnumValues(field)
		param := op.Parameters.GetByInAndName("query", field)
		var enum []string
		for _, v := range param.Schema.Value.Items.Value.Enum {
			enum = append(enum, v.(string))
		}
		if !slices.Equal(enum, values) {
			t.Errorf("%s enum documented as %v, handler accepts %v", field, enum, values)
		}
	}
}

// TestRoutesDocumented checks that every mounted route is in the document
// and every documented operation is mounted.
func TestRoutesDocumented(t *testing.T) {
	doc, _ := loadSpec(t)
	store := catalogtest.SQLite(t)
	e := echo.New()
	cat := newFakeCatalog()
	New(Options{Catalog: cat, Registrar: &fakeRegistrar{}, Refresher: &fakeRefresher{},
		Runs: newRunService(cat, newFakeRunStore(), nil), Audit: &fakeAuditLog{},
		Operator: store, Keys: store, Crawl: store, Annotator: store, Curator: store, Webhooks: store,
		Sources: sources.New(store, nil, nil, nil, sources.Config{}, nil), Provenance: store}).Mount(e)
	var mounted []string
	for _, r := range e.Routes() {
		if r.Method == echo.RouteNotFound || r.Method == http.MethodHead {
			// HEAD mirrors every GET (TestHeadOnGetRoutes); OpenAPI
			// documents it implicitly.
			continue
		}
		p := strings.TrimPrefix(r.Path, BasePath)
		// echo's :param to OpenAPI's {param}.
		parts := strings.Split(p, "/")
		for i, s := range parts {
			if strings.HasPrefix(s, ":") {
				parts[i] = "{" + s[1:] + "}"
			}
		}
		mounted = append(mounted, r.Method+" "+strings.Join(parts, "/"))
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	sort.Strings(mounted)
	sort.Strings(documented)
	if !slices.Equal(mounted, documented) {
		t.Errorf("mounted routes %v\ndocumented %v", mounted, documented)
	}
}

func TestChangesParametersDocumented(t *testing.T) {
	doc, _ := loadSpec(t)
	op := doc.Paths.Value("/changes").Get
	var documented []string
	for _, p := range op.Parameters {
		documented = append(documented, p.Value.Name)
	}
	sort.Strings(documented)
	if want := []string{paramLimit, paramSince}; !slices.Equal(documented, want) {
		t.Errorf("documented change feed parameters %v, handler accepts %v", documented, want)
	}
	limit := op.Parameters.GetByInAndName("query", paramLimit).Schema.Value
	if limit.Max == nil || *limit.Max != maxChangesLimit || limit.Default != float64(defaultChangesLimit) {
		t.Errorf("limit documented as max %v default %v, handler uses %d and %d",
			limit.Max, limit.Default, maxChangesLimit, defaultChangesLimit)
	}

	var kinds []any
	for _, k := range []string{catalog.ChangeCreated, catalog.ChangeUpdated, catalog.ChangeRemoved, catalog.ChangeRestored} {
		kinds = append(kinds, k)
	}
	if got := doc.Components.Schemas["Change"].Value.Properties["kind"].Value.Enum; !slices.Equal(got, kinds) {
		t.Errorf("Change.kind enum %v, catalog has %v", got, kinds)
	}
	var health []any
	for _, h := range query.EnumValues(catalog.FieldHealth) {
		health = append(health, h)
	}
	for _, schema := range []string{"HealthReport", "AgentDetail", "Summary"} {
		prop := "health"
		if schema == "HealthReport" {
			prop = "state"
		}
		if got := doc.Components.Schemas[schema].Value.Properties[prop].Value.Enum; !slices.Equal(got, health) {
			t.Errorf("%s.%s enum %v, want %v", schema, prop, got, health)
		}
	}
}

// TestSchemasMatchTypes compares each documented object schema with the
// JSON fields of the Go type encoded for it: a field added to a type but
// not to the document (or the reverse), or one whose omitempty disagrees
// with required, fails here even when no handler test happens to set it.
func TestSchemasMatchTypes(t *testing.T) {
	doc, _ := loadSpec(t)
	for name, typ := range map[string]reflect.Type{
		"SearchResponse":      reflect.TypeFor[SearchResponse](),
		"SuggestedFilter":     reflect.TypeFor[SuggestedFilter](),
		"Explanation":         reflect.TypeFor[Explanation](),
		"CompletionList":      reflect.TypeFor[CompletionsResponse](),
		"Completion":          reflect.TypeFor[Completion](),
		"WordMatch":           reflect.TypeFor[WordMatch](),
		"Summary":             reflect.TypeFor[Summary](),
		"SkillSummary":        reflect.TypeFor[SkillSummary](),
		"FacetCount":          reflect.TypeFor[FacetCount](),
		"AgentDetail":         reflect.TypeFor[AgentDetail](),
		"VersionsInfo":        reflect.TypeFor[VersionsInfo](),
		"VersionList":         reflect.TypeFor[VersionList](),
		"VersionSummary":      reflect.TypeFor[VersionSummary](),
		"HealthReport":        reflect.TypeFor[HealthReport](),
		"FetchError":          reflect.TypeFor[FetchError](),
		"Change":              reflect.TypeFor[Change](),
		"Card":                reflect.TypeFor[Card](),
		"Provider":            reflect.TypeFor[Provider](),
		"Capabilities":        reflect.TypeFor[Capabilities](),
		"Extension":           reflect.TypeFor[Extension](),
		"Interface":           reflect.TypeFor[Interface](),
		"SecurityScheme":      reflect.TypeFor[SecurityScheme](),
		"OAuthFlow":           reflect.TypeFor[OAuthFlow](),
		"SchemeRef":           reflect.TypeFor[SchemeRef](),
		"Skill":               reflect.TypeFor[Skill](),
		"Signature":           reflect.TypeFor[Signature](),
		"Finding":             reflect.TypeFor[Finding](),
		"ChangeList":          reflect.TypeFor[ChangeList](),
		"RegisterRequest":     reflect.TypeFor[RegisterRequest](),
		"RunRequest":          reflect.TypeFor[RunRequest](),
		"RunMessage":          reflect.TypeFor[RunMessage](),
		"RunCredentials":      reflect.TypeFor[RunCredentials](),
		"RunInterface":        reflect.TypeFor[RunInterface](),
		"RunResponse":         reflect.TypeFor[RunResponse](),
		"RunEvent":            reflect.TypeFor[RunEvent](),
		"RunTurn":             reflect.TypeFor[RunTurn](),
		"RunSkipped":          reflect.TypeFor[RunSkipped](),
		"RunFallback":         reflect.TypeFor[RunFallback](),
		"RunViolation":        reflect.TypeFor[RunViolation](),
		"RunError":            reflect.TypeFor[RunError](),
		"RunFailure":          reflect.TypeFor[RunFailure](),
		"RunStarted":          reflect.TypeFor[RunStarted](),
		"RunSummary":          reflect.TypeFor[RunSummary](),
		"RunList":             reflect.TypeFor[RunList](),
		"CheckResponse":       reflect.TypeFor[CheckResponse](),
		"CheckedInterface":    reflect.TypeFor[CheckedInterface](),
		"AuditList":           reflect.TypeFor[AuditList](),
		"AuditEntry":          reflect.TypeFor[AuditEntry](),
		"TrustedKey":          reflect.TypeFor[TrustedKey](),
		"TrustedKeyList":      reflect.TypeFor[TrustedKeyList](),
		"AddKeyRequest":       reflect.TypeFor[AddKeyRequest](),
		"CrawlerStatus":       reflect.TypeFor[CrawlerStatus](),
		"SecurityReport":      reflect.TypeFor[SecurityReport](),
		"ExportedFinding":     reflect.TypeFor[ExportedFinding](),
		"ReportCount":         reflect.TypeFor[ReportCount](),
		"FailingHost":         reflect.TypeFor[FailingHost](),
		"WebhookRequest":      reflect.TypeFor[WebhookRequest](),
		"Webhook":             reflect.TypeFor[Webhook](),
		"WebhookCreated":      reflect.TypeFor[WebhookCreated](),
		"WebhookList":         reflect.TypeFor[WebhookList](),
		"WebhookDelivery":     reflect.TypeFor[WebhookDelivery](),
		"WebhookDeliveryList": reflect.TypeFor[WebhookDeliveryList](),
		// The stored verification report is verify.Report as JSON.
		"VerificationReport": reflect.TypeFor[verify.Report](),
		"SignatureReport":    reflect.TypeFor[verify.SignatureReport](),
		"SignatureResult":    reflect.TypeFor[verify.SignatureResult](),
		"Signer":             reflect.TypeFor[verify.Signer](),
		"SecurityFinding":    reflect.TypeFor[verify.Finding](),
		"TransportProbe":     reflect.TypeFor[verify.Probe](),
		"ContentFinding":     reflect.TypeFor[verify.ContentFinding](),
		"RelatedAgent":       reflect.TypeFor[contentscan.Related](),
	} {
		s := doc.Components.Schemas[name].Value
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		fields, required := jsonFields(typ)
		sort.Strings(props)
		docRequired := slices.Clone(s.Required)
		sort.Strings(docRequired)
		if !slices.Equal(props, fields) {
			t.Errorf("%s: documented properties %v, %v encodes %v", name, props, typ, fields)
		}
		if !slices.Equal(docRequired, required) {
			t.Errorf("%s: documented required %v, %v always encodes %v", name, docRequired, typ, required)
		}
	}
}

// jsonFields lists the JSON names encoding/json gives typ's fields (with
// embedded structs flattened) and those it always writes (no omitempty),
// both sorted.
func jsonFields(typ reflect.Type) (all, always []string) {
	for f := range typ.Fields() {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			a, r := jsonFields(f.Type)
			all, always = append(all, a...), append(always, r...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		all = append(all, name)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") {
			always = append(always, name)
		}
	}
	sort.Strings(all)
	sort.Strings(always)
	return all, always
}

// TestViolationCodesDocumented: every protocol violation the proxy can
// list in a transcript is in the document's enum.
func TestViolationCodesDocumented(t *testing.T) {
	doc, _ := loadSpec(t)
	var documented []string
	for _, v := range doc.Components.Schemas["RunViolation"].Value.Properties["code"].Value.Enum {
		documented = append(documented, v.(string))
	}
	for _, code := range []string{proxy.ViolationEventAfterTerminal, proxy.ViolationUnknownState, proxy.ViolationUpdateBeforeTask,
		proxy.ViolationTaskChanged, proxy.ViolationMalformedPart, proxy.ViolationMissingTaskID,
		proxy.ViolationVersionIgnored, proxy.ViolationVersionRejected} {
		if !slices.Contains(documented, code) {
			t.Errorf("violation %q is not in RunViolation.code %v", code, documented)
		}
	}
}

// TestRegisterCodesAreCrawlerKinds holds the API's registration codes to
// the crawler's kinds, which problemError answers with.
func TestRegisterCodesAreCrawlerKinds(t *testing.T) {
	for code, kind := range map[string]string{
		CodeInvalidURL:     crawler.KindInvalidURL,
		CodeFetchFailed:    crawler.KindFetchFailed,
		CodeBlockedAddress: crawler.KindBlockedAddress,
		CodeInvalidCard:    crawler.KindInvalidCard,
	} {
		if code != kind {
			t.Errorf("API code %q is not the crawler's kind %q", code, kind)
		}
	}
}
