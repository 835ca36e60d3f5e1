package verify

// The A2A v1.0 specification (§8.4.1) canonicalizes the card after
// applying proto field-presence rules: a field the proto marks REQUIRED
// stays even when empty ("description": "", "skills": []), an optional
// field that is unset ("", [], {}, null, or false for a plain proto bool)
// is dropped. requiredFields lists the REQUIRED fields of a2a.proto
// (lf.a2a.v1) by message, in their JSON names.
var requiredFields = map[*message][]string{
	msgCard: {"name", "description", "supportedInterfaces", "version", "capabilities",
		"defaultInputModes", "defaultOutputModes", "skills"},
	msgInterface: {"url", "protocolBinding", "protocolVersion"},
	msgProvider:  {"url", "organization"},
	msgSkill:     {"id", "name", "description", "tags"},
	msgExtension: {"uri"},
}

// presence applies the field-presence rules to a decoded card, walking
// the v1.0 schema (msgCard). Fields the schema does not know are kept as
// received: presence rules say nothing about them, and dropping them
// would leave extension data unsigned.
func presence(v any, m *message) any {
	o, ok := v.(map[string]any)
	if !ok || m == nil {
		return v
	}
	if len(m.fields) == 1 && m.fields[0].kind == kOneof && m.fields[0].name == "" {
		// A map value that is itself a oneof (SecurityScheme).
		return presence(o, m.fields[0].msg)
	}
	out := make(map[string]any, len(o))
	for k, x := range o {
		fd, known := fieldOf(m, k)
		if !known {
			out[k] = x
			continue
		}
		if unset(x, fd.kind) && !isRequired(m, fd.name) {
			continue
		}
		switch fd.kind {
		case kMessage, kOneof:
			out[k] = presence(x, fd.msg)
		case kMessageList:
			a, ok := x.([]any)
			if !ok {
				out[k] = x
				continue
			}
			list := make([]any, len(a))
			for i, e := range a {
				list[i] = presence(e, fd.msg)
			}
			out[k] = list
		case kMessageMap:
			mo, ok := x.(map[string]any)
			if !ok {
				out[k] = x
				continue
			}
			mm := make(map[string]any, len(mo))
			for mk, e := range mo {
				mm[mk] = presence(e, fd.msg)
			}
			out[k] = mm
		default:
			out[k] = x
		}
	}
	return out
}

// fieldOf finds a schema field by its JSON or proto (snake_case) name.
func fieldOf(m *message, key string) (field, bool) {
	for _, fd := range m.fields {
		if fd.name == key || fd.snake == key {
			return fd, true
		}
	}
	return field{}, false
}

func isRequired(m *message, name string) bool {
	for _, r := range requiredFields[m] {
		if r == name {
			return true
		}
	}
	return false
}

// unset tells a value proto3 would not serialize: null, "", an empty list
// or map, and false for a plain bool. An `optional` scalar and a message
// have presence: written at all, even empty, they are set.
func unset(v any, k kind) bool {
	if k == kOptString || k == kOptBool {
		return v == nil
	}
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0 && k != kMessage && k != kOneof
	case bool:
		return !t && k == kBool
	}
	return false
}
