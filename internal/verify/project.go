package verify

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gowebpki/jcs"
)

// projection is a card after the v1.0 proto schema round trip the JS and
// Python SDKs sign over (ts-proto AgentCard.fromJSON/toJSON; protobuf
// ParseDict/MessageToDict). Fields the schema does not know are dropped,
// and so are the proto3 defaults of non-optional scalars (false for
// extensions[].required and pkceRequired, "" for strings). dropped lists
// the non-empty fields left out: the signature does not cover them, so
// anyone may add or change them without breaking it.
type projection struct {
	card    map[string]any
	dropped []string
}

// kind of a schema field.
type kind int

const (
	kString      kind = iota // proto3 string: "" is the default and is omitted
	kOptString               // `optional string`: kept when set
	kBool                    // proto3 bool: false is omitted
	kOptBool                 // `optional bool`: kept when set, even false
	kStringList              // repeated string
	kMessage                 // nested message
	kMessageList             // repeated message
	kMessageMap              // map<string, message>
	kStringMap               // map<string, string>
	kStruct                  // google.protobuf.Struct: copied as is
	kOneof                   // a message whose fields form a oneof: the first set wins
)

type field struct {
	name, snake string
	kind        kind
	msg         *message
}

type message struct {
	fields []field
}

func f(name string, k kind) field { return field{name: name, snake: snakeCase(name), kind: k} }

func fm(name string, k kind, m *message) field {
	return field{name: name, snake: snakeCase(name), kind: k, msg: m}
}

func snakeCase(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// The A2A v1.0 AgentCard schema (a2a.proto, lf.a2a.v1), as generated into
// @a2a-js/sdk 1.3.0 dist/index.js. `signatures` is not listed: it is never
// part of the payload.
var (
	msgInterface = &message{fields: []field{f("url", kString), f("protocolBinding", kString), f("tenant", kString), f("protocolVersion", kString)}}
	msgProvider  = &message{fields: []field{f("url", kString), f("organization", kString)}}
	msgExtension = &message{fields: []field{f("uri", kString), f("description", kString), f("required", kBool), f("params", kStruct)}}
	msgCaps      = &message{fields: []field{f("streaming", kOptBool), f("pushNotifications", kOptBool),
		fm("extensions", kMessageList, msgExtension), f("extendedAgentCard", kOptBool)}}
	msgStringList  = &message{fields: []field{f("list", kStringList)}}
	msgRequirement = &message{fields: []field{fm("schemes", kMessageMap, msgStringList)}}
	msgSkill       = &message{fields: []field{f("id", kString), f("name", kString), f("description", kString),
		f("tags", kStringList), f("examples", kStringList), f("inputModes", kStringList), f("outputModes", kStringList),
		fm("securityRequirements", kMessageList, msgRequirement)}}
	flowFields = func(extra ...field) *message {
		return &message{fields: append(extra, f("refreshUrl", kString), f("scopes", kStringMap))}
	}
	msgFlows = &message{fields: []field{
		fm("authorizationCode", kMessage, &message{fields: []field{f("authorizationUrl", kString), f("tokenUrl", kString),
			f("refreshUrl", kString), f("scopes", kStringMap), f("pkceRequired", kBool)}}),
		fm("clientCredentials", kMessage, flowFields(f("tokenUrl", kString))),
		fm("implicit", kMessage, flowFields(f("authorizationUrl", kString))),
		fm("password", kMessage, flowFields(f("tokenUrl", kString))),
		fm("deviceCode", kMessage, flowFields(f("deviceAuthorizationUrl", kString), f("tokenUrl", kString))),
	}}
	msgScheme = &message{fields: []field{
		fm("apiKeySecurityScheme", kMessage, &message{fields: []field{f("description", kString), f("location", kString), f("name", kString)}}),
		fm("httpAuthSecurityScheme", kMessage, &message{fields: []field{f("description", kString), f("scheme", kString), f("bearerFormat", kString)}}),
		fm("oauth2SecurityScheme", kMessage, &message{fields: []field{f("description", kString),
			fm("flows", kOneof, msgFlows), f("oauth2MetadataUrl", kString)}}),
		fm("openIdConnectSecurityScheme", kMessage, &message{fields: []field{f("description", kString), f("openIdConnectUrl", kString)}}),
		fm("mtlsSecurityScheme", kMessage, &message{fields: []field{f("description", kString)}}),
	}}
	msgCard = &message{fields: []field{
		f("name", kString), f("description", kString),
		fm("supportedInterfaces", kMessageList, msgInterface),
		fm("provider", kMessage, msgProvider),
		f("version", kString), f("documentationUrl", kOptString),
		fm("capabilities", kMessage, msgCaps),
		fm("securitySchemes", kMessageMap, &message{fields: []field{fm("", kOneof, msgScheme)}}),
		fm("securityRequirements", kMessageList, msgRequirement),
		f("defaultInputModes", kStringList), f("defaultOutputModes", kStringList),
		fm("skills", kMessageList, msgSkill),
		f("iconUrl", kOptString),
	}}
)

func project(card map[string]any) *projection {
	p := &projection{}
	p.card = p.message(card, msgCard, "$")
	return p
}

// lookup finds a field by its JSON name, then by its proto (snake_case)
// name, treating null as unset (ts-proto's isSet).
func lookup(o map[string]any, fd field) (any, string, bool) {
	if v, ok := o[fd.name]; ok && v != nil {
		return v, fd.name, true
	}
	if fd.snake != fd.name {
		if v, ok := o[fd.snake]; ok && v != nil {
			return v, fd.snake, true
		}
	}
	return nil, "", false
}

func (p *projection) message(o map[string]any, m *message, path string) map[string]any {
	out := map[string]any{}
	used := map[string]bool{}
	for _, fd := range m.fields {
		if fd.kind == kOneof && fd.name == "" {
			// A map value that is itself a oneof (SecurityScheme).
			return p.oneof(o, fd.msg, path)
		}
		v, key, ok := lookup(o, fd)
		if !ok {
			continue
		}
		used[key] = true
		fpath := path + "." + key
		switch fd.kind {
		case kString, kOptString:
			s := jsString(v)
			if s != "" || fd.kind == kOptString {
				out[fd.name] = s
			}
		case kBool:
			if jsTruthy(v) {
				out[fd.name] = true
			}
		case kOptBool:
			out[fd.name] = jsTruthy(v)
		case kStringList:
			a, ok := v.([]any)
			if !ok {
				p.drop(fpath)
				continue
			}
			list := make([]any, len(a))
			for i, x := range a {
				list[i] = jsString(x)
			}
			if len(list) > 0 {
				out[fd.name] = list
			}
		case kMessage:
			sub, _ := v.(map[string]any)
			out[fd.name] = p.message(sub, fd.msg, fpath)
		case kOneof:
			sub, _ := v.(map[string]any)
			out[fd.name] = p.oneof(sub, fd.msg, fpath)
		case kMessageList:
			a, ok := v.([]any)
			if !ok {
				p.drop(fpath)
				continue
			}
			list := make([]any, len(a))
			for i, x := range a {
				sub, _ := x.(map[string]any)
				list[i] = p.message(sub, fd.msg, fpath+"["+strconv.Itoa(i)+"]")
			}
			if len(list) > 0 {
				out[fd.name] = list
			}
		case kMessageMap:
			mo, ok := v.(map[string]any)
			if !ok {
				p.drop(fpath)
				continue
			}
			mm := make(map[string]any, len(mo))
			for k, x := range mo {
				sub, _ := x.(map[string]any)
				mm[k] = p.message(sub, fd.msg, fpath+"."+k)
			}
			if len(mm) > 0 {
				out[fd.name] = mm
			}
		case kStringMap:
			mo, ok := v.(map[string]any)
			if !ok {
				p.drop(fpath)
				continue
			}
			mm := make(map[string]any, len(mo))
			for k, x := range mo {
				mm[k] = jsString(x)
			}
			if len(mm) > 0 {
				out[fd.name] = mm
			}
		case kStruct:
			if so, ok := v.(map[string]any); ok {
				out[fd.name] = so
			} else {
				p.drop(fpath)
			}
		}
	}
	for k, v := range o {
		if !used[k] && k != "signatures" && !isEmpty(v) {
			p.drop(path + "." + k)
		}
	}
	return out
}

// oneof keeps the first member set, in schema order, as ts-proto's fromJSON
// does; the other members are dropped.
func (p *projection) oneof(o map[string]any, m *message, path string) map[string]any {
	for _, fd := range m.fields {
		v, key, ok := lookup(o, fd)
		if !ok {
			continue
		}
		sub, _ := v.(map[string]any)
		out := map[string]any{fd.name: p.message(sub, fd.msg, path+"."+key)}
		for k, x := range o {
			if k != key && !isEmpty(x) {
				p.drop(path + "." + k)
			}
		}
		return out
	}
	for k, x := range o {
		if !isEmpty(x) {
			p.drop(path + "." + k)
		}
	}
	return map[string]any{}
}

func (p *projection) drop(path string) { p.dropped = append(p.dropped, path) }

// isEmpty tells values whose omission changes nothing a client reads.
func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		for _, x := range t {
			if !isEmpty(x) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, x := range t {
			if !isEmpty(x) {
				return false
			}
		}
		return true
	}
	return false
}

// jsString is JavaScript's String(v) for a decoded JSON value.
func jsString(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case json.Number:
		fl, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return string(t)
		}
		s, err := jcs.NumberToJSON(fl)
		if err != nil {
			return string(t)
		}
		return s
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			if x != nil {
				parts[i] = jsString(x)
			}
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// jsTruthy is JavaScript's Boolean(v).
func jsTruthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case json.Number:
		fl, err := strconv.ParseFloat(string(t), 64)
		return err != nil || fl != 0
	}
	return true
}
