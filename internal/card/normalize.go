package card

import (
	"fmt"
	"slices"
	"strings"
)

// v03Fields are the endpoint fields v1.0 removed; their presence next to
// `supportedInterfaces` makes a mixed card (a2a-go's a2av0 compatibility
// producer serves exactly that).
var v03Fields = []string{"url", "preferredTransport", "additionalInterfaces", "protocolVersion"}

func detectShape(top map[string]any) Shape {
	if _, ok := field(top, "supportedInterfaces"); ok {
		for _, k := range v03Fields {
			if _, ok := field(top, k); ok {
				return ShapeMixed
			}
		}
		return ShapeV10
	}
	if _, ok := field(top, "protocolVersion"); ok {
		return ShapeV03
	}
	return ShapeV02
}

// cardFields are the fields of an A2A card. A nameless object must have two
// of them to be read as a card (see CodeNotACard).
var cardFields = []string{"skills", "supportedInterfaces", "url", "additionalInterfaces", "capabilities",
	"defaultInputModes", "defaultOutputModes", "protocolVersion", "protocolVersions"}

// nameKeys are keys real nameless cards put their name under instead of
// `name`; a refusal names the one it found, so the publisher sees the fix.
var nameKeys = []string{"display_name", "displayName", "agent_name", "agentName", "title", "name_for_human"}

// admit refuses what is not an agent card (CodeNotACard) and a card
// without a name (CodeMissingName). It runs after the walk, so that a
// limit violation, which bounds our work, is what an oversized non-card
// reports.
func admit(top map[string]any) *ParseError {
	if perr := notACard(top); perr != nil {
		return perr
	}
	return missingName(top)
}

// notACard refuses a JSON object that is not an agent card. A card gives
// a caller something to call (an interface or a url) or to choose (a
// skill); a name next to `capabilities` or default modes is what product
// descriptors and MCP manifests carry too. Without a name it also takes
// two card fields: that tells a broken card from another format that
// happens to use a word like "url".
func notACard(top map[string]any) *ParseError {
	var found []string
	for _, k := range cardFields {
		if _, ok := field(top, k); ok {
			found = append(found, k)
		}
	}
	has := func() string {
		if len(found) == 0 {
			return "it has no agent card field at all"
		}
		return "of the agent card fields it has only " + strings.Join(found, ", ")
	}
	if !callable(top) {
		who := "has no name"
		if hasName(top) {
			who = "has a name"
		}
		return parseErr(CodeNotACard, "$",
			"the JSON object %s but gives a caller nothing to call or choose: no endpoint (an object in supportedInterfaces or additionalInterfaces, or a url) and no skill (an object in skills); %s: it is not an A2A agent card",
			who, has())
	}
	if !hasName(top) && len(found) < 2 {
		return parseErr(CodeNotACard, "$", "the JSON object has no name, and %s: it is not an A2A agent card", has())
	}
	return nil
}

// callable tells whether the object declares an endpoint or a skill, as
// written: an entry that turns out unusable (a placeholder URL) is a
// broken card's fault, reported as a finding, not a sign of another
// format. An entry must be an object, as every A2A interface and skill
// is: a résumé's `"skills": ["python"]` offers nothing to call.
func callable(top map[string]any) bool {
	if u, ok := top["url"].(string); ok && strings.TrimSpace(u) != "" {
		return true
	}
	for _, k := range []string{"supportedInterfaces", "additionalInterfaces", "skills"} {
		a, _ := top[k].([]any)
		if slices.ContainsFunc(a, func(v any) bool { _, ok := v.(map[string]any); return ok }) {
			return true
		}
	}
	return false
}

func hasName(top map[string]any) bool {
	name, _ := top["name"].(string)
	return strings.TrimSpace(name) != ""
}

// missingName refuses a card without a usable name; see CodeMissingName.
func missingName(top map[string]any) *ParseError {
	if hasName(top) {
		return nil
	}
	what := "is missing"
	switch v, present := top["name"]; {
	case !present:
	case v == nil:
		what = "is null"
	default:
		if _, ok := v.(string); ok {
			what = "is empty"
		} else {
			what = "is " + jsonType(v) + ", not a string"
		}
	}
	elsewhere := ""
	for _, k := range nameKeys {
		if s, ok := top[k].(string); ok && strings.TrimSpace(s) != "" {
			if r := []rune(s); len(r) > 80 {
				// The message is stored with every failed check.
				s = string(r[:80]) + "…"
			}
			elsewhere = fmt.Sprintf("; the card has %s %q, which A2A clients do not read: write it as name", pathKey("$", k), s)
			break
		}
	}
	return parseErr(CodeMissingName, "$.name",
		"$.name %s; every agent card must name its agent (v0.3 §5.5 and v1.0 AgentCard.name)%s", what, elsewhere)
}

func (p *parser) card(top map[string]any) *Card {
	c := &Card{Shape: detectShape(top)}
	p.shape = c.Shape
	c.Name = p.reqStr(top, "name", "$", SeverityError)
	c.Description = p.reqStr(top, "description", "$", SeverityWarning)
	c.Version = p.reqStr(top, "version", "$", SeverityWarning)
	c.IconURL = p.optURL(top, "iconUrl", "$")
	c.DocumentationURL = p.optURL(top, "documentationUrl", "$")
	c.Provider = p.provider(top)
	c.Capabilities = p.capabilities(top)

	var declaredVersions []string
	c.Interfaces, declaredVersions = p.interfaces(top, c.Shape)
	c.ProtocolVersions = protocolVersions(c.Interfaces, declaredVersions)

	declared := map[string]bool{}
	c.SecuritySchemes = p.schemes(top, declared)
	c.SecurityRequirements = p.requirements(top, "$", declared)
	if reqs, ok := p.legacyAuthentication(top, c, declared); ok && !hasSecurity(top) {
		c.SecurityRequirements = reqs
	}
	if c.SecurityRequirements == nil {
		c.SecurityRequirements = []Requirement{}
	}
	slices.SortFunc(c.SecuritySchemes, func(a, b SecurityScheme) int { return strings.Compare(a.Name, b.Name) })

	var present bool
	c.DefaultInputModes, present = p.modes(top, "defaultInputModes", "$")
	if !present {
		p.add(LintMissingField, SeverityWarning, "$.defaultInputModes", "$.defaultInputModes is required (%s); skills without their own inputModes declare none", p.cite("$"))
	}
	c.DefaultOutputModes, present = p.modes(top, "defaultOutputModes", "$")
	if !present {
		p.add(LintMissingField, SeverityWarning, "$.defaultOutputModes", "$.defaultOutputModes is required (%s); skills without their own outputModes declare none", p.cite("$"))
	}
	c.Skills = p.skills(top, c, declared)
	c.Signatures = p.signatures(top)
	return c
}

func hasSecurity(top map[string]any) bool {
	_, v1 := field(top, "securityRequirements")
	_, v0 := field(top, "security")
	return v1 || v0
}

func (p *parser) provider(top map[string]any) *Provider {
	o, ok := p.object(top, "provider", "$")
	if !ok {
		return nil
	}
	pr := &Provider{
		Organization: p.reqStr(o, "organization", "$.provider", SeverityWarning),
		URL:          p.optURL(o, "url", "$.provider"),
	}
	if pr.Organization == "" && pr.URL == "" {
		return nil
	}
	return pr
}

func (p *parser) capabilities(top map[string]any) Capabilities {
	var caps Capabilities
	// v0.3 kept this flag at the top level; v1.0 moved it into capabilities.
	caps.ExtendedCard = p.boolean(top, "supportsAuthenticatedExtendedCard", "$")
	if _, ok := field(top, "supportsExtendedAgentCard"); ok {
		v := p.boolean(top, "supportsExtendedAgentCard", "$")
		caps.ExtendedCard = caps.ExtendedCard || v
		p.add(LintHybridField, SeverityWarning, "$.supportsExtendedAgentCard",
			"$.supportsExtendedAgentCard is a field of no A2A version; read as the extended-card flag (v0.3 §5.5 supportsAuthenticatedExtendedCard, v1.0 capabilities.extendedAgentCard), which clients read instead")
	}
	o, ok := p.object(top, "capabilities", "$")
	if !ok {
		if _, present := field(top, "capabilities"); !present {
			p.add(LintMissingField, SeverityWarning, "$.capabilities", "$.capabilities is required (%s; use {} when the agent supports no optional feature)", p.cite("$"))
		}
		return caps
	}
	const base = "$.capabilities"
	caps.Streaming = p.boolean(o, "streaming", base)
	caps.PushNotifications = p.boolean(o, "pushNotifications", base)
	caps.StateTransitionHistory = p.boolean(o, "stateTransitionHistory", base)
	if p.boolean(o, "extendedAgentCard", base) {
		caps.ExtendedCard = true
	}
	exts, _ := p.array(o, "extensions", base, p.lim.MaxExtensions, "extensions")
	for i, v := range exts {
		path := pathIndex(base+".extensions", i)
		e, ok := v.(map[string]any)
		if !ok {
			p.wrongType(path, "an object", v)
			continue
		}
		ext := Extension{
			URI:         p.reqStr(e, "uri", path, SeverityWarning),
			Description: p.optStr(e, "description", path),
			Required:    p.boolean(e, "required", path),
		}
		if params, ok := p.object(e, "params", path); ok {
			ext.Params = rawJSON(params)
		}
		if ext.URI == "" {
			continue
		}
		caps.Extensions = append(caps.Extensions, ext)
	}
	return caps
}

func (p *parser) optStr(o map[string]any, key, base string) string {
	s, _ := p.str(o, key, base)
	return s
}

func (p *parser) skills(top map[string]any, c *Card, declared map[string]bool) []Skill {
	out := []Skill{}
	if v, present := top["skills"]; present && v == nil {
		// SDKs that serialize an unset list write null: the card declares
		// no skills, as an empty list would, rather than leaving out a
		// required field.
		p.add(LintEmptySkills, SeverityWarning, "$.skills", "$.skills is null: the agent declares nothing it can do")
		return out
	}
	list, ok := p.array(top, "skills", "$", p.lim.MaxSkills, "skills")
	if !ok {
		if _, present := field(top, "skills"); !present {
			p.add(LintMissingField, SeverityError, "$.skills", "$.skills is required (%s): without skills the agent cannot be found by what it does", p.cite("$"))
		}
		return out
	}
	if len(list) == 0 {
		p.add(LintEmptySkills, SeverityWarning, "$.skills", "$.skills is empty: the agent declares nothing it can do")
		return out
	}
	seen := make(map[string]int, len(list))
	for i, v := range list {
		base := pathIndex("$.skills", i)
		o, ok := v.(map[string]any)
		if !ok {
			p.wrongType(base, "an object", v)
			continue
		}
		s := Skill{
			ID:          p.reqStr(o, "id", base, SeverityError),
			Name:        p.reqStr(o, "name", base, SeverityError),
			Description: p.reqStr(o, "description", base, SeverityWarning),
		}
		tags, present := p.strList(o, "tags", base, p.lim.MaxTagsPerSkill, "tags")
		if !present {
			if _, there := field(o, "tags"); !there {
				p.add(LintMissingField, SeverityWarning, base+".tags", "%s.tags is required (%s)", base, p.cite(base))
			}
		}
		s.Tags = nonNil(tags)
		s.Examples, _ = p.strList(o, "examples", base, p.lim.MaxExamplesPerSkill, "examples")

		in, _ := p.modes(o, "inputModes", base)
		if len(in) == 0 {
			in, s.InheritsInputModes = slices.Clone(c.DefaultInputModes), true
		}
		out2, _ := p.modes(o, "outputModes", base)
		if len(out2) == 0 {
			out2, s.InheritsOutputModes = slices.Clone(c.DefaultOutputModes), true
		}
		s.InputModes, s.OutputModes = nonNil(in), nonNil(out2)
		s.SecurityRequirements = p.requirements(o, base, declared)

		if s.ID == "" {
			// Reported; kept when named, so that its name, tags and modes
			// stay searchable. It cannot be referenced by id.
			if s.Name != "" {
				out = append(out, s)
			}
			continue
		}
		if first, dup := seen[s.ID]; dup {
			p.add(LintDuplicateSkillID, SeverityError, base+".id",
				"%s.id %q repeats the id of $.skills[%d]; only the first is kept", base, s.ID, first)
			continue
		}
		seen[s.ID] = i
		out = append(out, s)
	}
	return out
}

func (p *parser) signatures(top map[string]any) []Signature {
	list, _ := p.array(top, "signatures", "$", p.lim.MaxSignatures, "signatures")
	var out []Signature
	for i, v := range list {
		base := pathIndex("$.signatures", i)
		o, ok := v.(map[string]any)
		if !ok {
			p.wrongType(base, "an object", v)
			continue
		}
		sig := Signature{
			Protected: p.reqStr(o, "protected", base, SeverityError),
			Signature: p.reqStr(o, "signature", base, SeverityError),
		}
		if h, ok := p.object(o, "header", base); ok {
			sig.Header = rawJSON(h)
		}
		if sig.Protected == "" || sig.Signature == "" {
			continue
		}
		out = append(out, sig)
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
