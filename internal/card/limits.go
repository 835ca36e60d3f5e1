package card

// Limits bound what Parse accepts. Cards come from untrusted servers and every
// entry fans out into catalog rows and index entries, so each list that is
// stored per entry is capped, not only the byte size. A zero field takes its
// DefaultLimits value; Limits stays comparable so callers can test for the
// zero value.
type Limits struct {
	// MaxBytes caps the raw card.
	MaxBytes int
	// MaxDepth caps the nesting of objects and arrays; the top-level object
	// is depth 1. Real cards stay under 8 (oauth2 scopes sit at depth 6);
	// the rest is room for extension params.
	MaxDepth int
	// MaxSkills caps `skills`.
	MaxSkills int
	// MaxTagsPerSkill caps each skill's `tags`.
	MaxTagsPerSkill int
	// MaxExamplesPerSkill caps each skill's `examples`.
	MaxExamplesPerSkill int
	// MaxModes caps each list of input or output modes (card or skill).
	MaxModes int
	// MaxInterfaces caps `supportedInterfaces` and `additionalInterfaces`,
	// each.
	MaxInterfaces int
	// MaxSchemes caps `securitySchemes`, each security requirement list and
	// the number of schemes one requirement names.
	MaxSchemes int
	// MaxSignatures caps `signatures`; each one costs a verification.
	MaxSignatures int
	// MaxExtensions caps `capabilities.extensions`.
	MaxExtensions int
	// MaxStringLen caps every string and object key, measured in bytes as
	// written (escapes included), which is never less than decoded.
	MaxStringLen int

	// Stored reads bytes that were admitted before, read back from
	// storage: the admission rules (CodeNotACard, CodeMissingName), which
	// have grown stricter over releases, are not applied again, so an
	// agent stored under older rules still reads, its faults kept as
	// findings. Every other limit applies as usual.
	Stored bool
}

// DefaultLimits are generous for real cards (the largest public cards seen
// have a few dozen skills) and keep one hostile card to a few megabytes of
// memory once decoded.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:            1 << 20,
		MaxDepth:            32,
		MaxSkills:           500,
		MaxTagsPerSkill:     64,
		MaxExamplesPerSkill: 64,
		MaxModes:            64,
		MaxInterfaces:       64,
		MaxSchemes:          64,
		MaxSignatures:       16,
		MaxExtensions:       64,
		MaxStringLen:        64 << 10,
	}
}

// withDefaults fills zero (or negative) fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	for _, f := range []struct{ v, def *int }{
		{&l.MaxBytes, &d.MaxBytes},
		{&l.MaxDepth, &d.MaxDepth},
		{&l.MaxSkills, &d.MaxSkills},
		{&l.MaxTagsPerSkill, &d.MaxTagsPerSkill},
		{&l.MaxExamplesPerSkill, &d.MaxExamplesPerSkill},
		{&l.MaxModes, &d.MaxModes},
		{&l.MaxInterfaces, &d.MaxInterfaces},
		{&l.MaxSchemes, &d.MaxSchemes},
		{&l.MaxSignatures, &d.MaxSignatures},
		{&l.MaxExtensions, &d.MaxExtensions},
		{&l.MaxStringLen, &d.MaxStringLen},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return l
}
