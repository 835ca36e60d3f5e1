package verify

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/safehttp"
)

// acceptedAlgs are the asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037)
// a card signature may use. `none` and the HMAC family are refused: an
// HMAC "verified" with a public key as the secret proves nothing, since
// everyone has the public key.
var acceptedAlgs = []jose.SignatureAlgorithm{
	jose.ES256, jose.ES384, jose.ES512,
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.EdDSA,
}

// maxSignatures bounds the work one card can cause.
const maxSignatures = 16

// header is a decoded JWS header (protected merged with unprotected).
type header struct {
	alg, kid, typ, jku string
	crit               []string
	hasCrit            bool
	// unencoded is RFC 7797 "b64": false: the signing input holds the
	// payload as is, not base64url-encoded, which A2A never uses.
	unencoded bool
	notes     []string
}

// mayHoldSignatures tells whether the bytes of a card card.Parse accepted
// may have a signatures member: they spell the key, or hold an escape
// that could spell it. Most cards are unsigned, and telling so from a
// strict decode of the whole card costs more than the rest of their
// signature check. card.Parse has refused what that decode would refuse
// (invalid UTF-8, repeated keys, trailing data), so both say unsigned.
func mayHoldSignatures(raw []byte) bool {
	return bytes.Contains(raw, []byte(`signatures`)) || bytes.Contains(raw, []byte(`\u`))
}

// VerifySignatures checks every `signatures[]` entry of the raw card.
// origins are the origins a jku may be on without operator trust.
func (v *Verifier) VerifySignatures(ctx context.Context, raw []byte, origins []string) SignatureReport {
	rep := SignatureReport{Entries: []SignatureResult{}}
	tree, err := decodeStrict(raw)
	if err != nil {
		rep.Status = StatusInvalid
		rep.Entries = append(rep.Entries, SignatureResult{Index: -1, Result: ResultMalformed, Problem: err.Error()})
		return rep
	}
	top, ok := tree.(map[string]any)
	if !ok {
		rep.Status = StatusInvalid
		rep.Entries = append(rep.Entries, SignatureResult{Index: -1, Result: ResultMalformed, Problem: "the card is not a JSON object"})
		return rep
	}
	sigs, present := top["signatures"]
	list, _ := sigs.([]any)
	if !present || sigs == nil || (len(list) == 0 && isArray(sigs)) {
		rep.Status = StatusUnsigned
		return rep
	}
	if !isArray(sigs) {
		rep.Status = StatusInvalid
		rep.Entries = append(rep.Entries, SignatureResult{Index: -1, Result: ResultMalformed, Problem: "signatures is not an array"})
		return rep
	}
	pl := newPayloads(top)
	tried := &triedPayloads{}
	for i, s := range list {
		var res SignatureResult
		if i >= maxSignatures {
			res = SignatureResult{Index: i, Result: ResultMalformed, Problem: fmt.Sprintf("more than %d signatures; the rest are not checked", maxSignatures)}
		} else {
			res = v.verifyOne(ctx, i, s, pl, tried, origins)
		}
		rep.Entries = append(rep.Entries, res)
	}
	rep.Status = StatusKeyUnavailable
	var verifiedKeys []string
	for _, e := range rep.Entries {
		switch {
		case e.Result == ResultVerified || e.Result == ResultKeyChanged:
			if rep.Signer == nil {
				rep.Signer = e.Signer
			}
			if !slices.Contains(verifiedKeys, e.Signer.Thumbprint) {
				verifiedKeys = append(verifiedKeys, e.Signer.Thumbprint)
			}
			if t := trustOf(e.Signer.Source); rep.Trust == "" || trustRank(t) > trustRank(rep.Trust) {
				rep.Trust = t
			}
			rep.Status = StatusVerified
		case e.Result.definite() && rep.Status != StatusVerified:
			rep.Status = StatusInvalid
		}
	}
	rep.Rotation = len(verifiedKeys) > 1
	if rep.Signer != nil {
		// A signer rotating keys signs the new card with the new key and
		// may leave the old key's signature, over the old card, in place:
		// that entry fails, but the card is vouched for.
		for i, e := range rep.Entries {
			if e.Result == ResultBadSignature && (e.Signer == nil || !slices.Contains(verifiedKeys, e.Signer.Thumbprint)) {
				rep.Entries[i].Notes = append(rep.Entries[i].Notes, fmt.Sprintf(
					"signature %d, by key %s, verifies the card: this one is likely left from before a key change, not a sign the card was altered",
					verifiedIndex(rep.Entries), rep.Signer.Thumbprint))
			}
		}
	}
	return rep
}

// verifiedIndex is the index of the first entry that verified.
func verifiedIndex(entries []SignatureResult) int {
	for _, e := range entries {
		if e.Result == ResultVerified || e.Result == ResultKeyChanged {
			return e.Index
		}
	}
	return -1
}

func isArray(v any) bool { _, ok := v.([]any); return ok }

func trustRank(t Trust) int {
	switch t {
	case TrustPinned:
		return 2
	case TrustTrustedOrigin:
		return 1
	}
	return 0
}

// triedPayloads remembers the payload of each form once built, so forms
// are built at most once per card, whatever the number of signatures.
type triedPayloads struct {
	built   [len(forms)]bool
	payload [len(forms)][]byte
	dropped [len(forms)][]string
	err     [len(forms)]error
}

func (t *triedPayloads) get(pl *payloads, i int) ([]byte, []string, error) {
	if !t.built[i] {
		t.payload[i], t.dropped[i], t.err[i] = pl.build(forms[i])
		t.built[i] = true
	}
	return t.payload[i], t.dropped[i], t.err[i]
}

func (v *Verifier) verifyOne(ctx context.Context, i int, s any, pl *payloads, tried *triedPayloads, origins []string) SignatureResult {
	res := SignatureResult{Index: i}
	fail := func(r Result, format string, args ...any) SignatureResult {
		res.Result, res.Problem = r, fmt.Sprintf(format, args...)
		return res
	}
	entry, ok := s.(map[string]any)
	if !ok {
		return fail(ResultMalformed, "the entry is not an object")
	}
	protected, _ := entry["protected"].(string)
	sigText, _ := entry["signature"].(string)
	if protected == "" || sigText == "" {
		return fail(ResultMalformed, "protected and signature are required strings")
	}
	unprotected, hasUnprotected := entry["header"].(map[string]any)
	if h, present := entry["header"]; present && h != nil && !hasUnprotected {
		return fail(ResultMalformed, "header must be an object")
	}
	h, err := parseHeader(protected, unprotected)
	if err != nil {
		return fail(ResultMalformed, "%v", err)
	}
	res.Alg, res.KID, res.Typ, res.JKU, res.Notes = h.alg, h.kid, h.typ, h.jku, h.notes
	if !slices.Contains(acceptedAlgs, jose.SignatureAlgorithm(h.alg)) {
		return fail(ResultUnsupportedAlgorithm, "alg %q is not an accepted asymmetric algorithm (%s)", h.alg, algList())
	}
	if unknown := slices.DeleteFunc(slices.Clone(h.crit), func(c string) bool { return c == "b64" }); h.hasCrit && len(unknown) > 0 {
		// RFC 7515 §4.1.11: recipients MUST reject a JWS whose crit lists
		// an extension they do not understand. b64 (RFC 7797) is
		// understood well enough to say why such a signature fails.
		return fail(ResultUnsupportedCritical, "crit %q names header parameters this verifier does not implement", unknown)
	}
	if h.kid == "" {
		return fail(ResultMalformed, "kid is missing (A2A v1.0 §8.4.2: the protected header MUST carry kid)")
	}
	if _, err := base64.RawURLEncoding.DecodeString(sigText); err != nil {
		return fail(ResultMalformed, "the signature is not base64url without padding (RFC 7515 §2)")
	}
	// Compact detached form (RFC 7515 Appendix F): header..signature.
	jws, err := jose.ParseDetached(protected+".."+sigText, []byte{}, acceptedAlgs)
	if err != nil {
		// go-jose's texts are ours to show once its package prefix is off.
		return fail(ResultMalformed, "the JWS cannot be read: %s", strings.TrimPrefix(err.Error(), "go-jose/go-jose: "))
	}

	key, signer, r, problem := v.resolveKey(ctx, h, origins)
	if r != "" {
		res.Signer = signer
		return fail(r, "%s", problem)
	}
	res.Signer = signer
	if key.Algorithm != "" && key.Algorithm != h.alg {
		return fail(ResultBadSignature, "key %q is for alg %s, the signature says %s", h.kid, key.Algorithm, h.alg)
	}
	if key.Use != "" && key.Use != "sig" {
		return fail(ResultBadSignature, "key %q has use %q, not sig", h.kid, key.Use)
	}

	var seen []formPayload
	var lastErr error
	for fi := range forms {
		payload, dropped, err := tried.get(pl, fi)
		if err != nil {
			lastErr = err
			continue
		}
		if slices.ContainsFunc(seen, func(p formPayload) bool { return bytes.Equal(p.payload, payload) }) {
			continue
		}
		seen = append(seen, formPayload{forms[fi].form, payload})
		// go-jose builds the signing input the header asks for, so with
		// "b64": false this checks the unencoded form.
		if err := jws.DetachedVerify(payload, key.Key); err == nil {
			res.Form, res.UnsignedFields = forms[fi].form, dropped
			if h.unencoded {
				return fail(ResultUnencodedPayload, "signed with an unencoded payload (RFC 7797 \"b64\": false), which A2A does not use: its signing input is the base64url-encoded payload (v1.0 §8.4.1), so A2A clients reject the signature. It does match the card's %s form: the card was not altered after signing", forms[fi].form)
			}
			res.Result = ResultVerified
			return res
		} else if !errors.Is(err, jose.ErrCryptoFailure) {
			lastErr = err
		}
	}
	if lastErr != nil && len(seen) == 0 {
		return fail(ResultMalformed, "%s", lastErr.Error())
	}
	if h.unencoded {
		return fail(ResultBadSignature, "the signature matches none of the %d canonical forms of the card, read as the unencoded payload its header asks for (RFC 7797 \"b64\": false, which A2A does not use)", len(seen))
	}
	if r := diagnose(h, protected, sigText, key, seen); r.Result != "" {
		res.Result, res.Form, res.Problem = r.Result, r.Form, r.Problem
		return res
	}
	if r := v.keyChange(ctx, h, signer, jws, seen, origins); r != nil {
		res.Result, res.Form, res.Problem, res.Signer, res.ReplacedKey = ResultKeyChanged, r.Form, r.Problem, r.Signer, signer
		return res
	}
	return fail(ResultBadSignature, "the signature matches none of the %d canonical forms of the card: the card was changed after it was signed, or signed by another key", len(seen))
}

// formPayload is the payload of one canonical form of the card.
type formPayload struct {
	form    Form
	payload []byte
}

func algList() string {
	s := make([]string, len(acceptedAlgs))
	for i, a := range acceptedAlgs {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

// parseHeader decodes the protected header (base64url, no padding, RFC
// 7515 §2) and merges the unprotected one.
func parseHeader(protected string, unprotected map[string]any) (header, error) {
	var h header
	raw, err := base64.RawURLEncoding.DecodeString(protected)
	if err != nil {
		// base64's own text ("illegal base64 data at input byte 9") says
		// nothing to a reader of the report.
		return h, errors.New("protected header is not base64url without padding (RFC 7515 §2)")
	}
	v, err := decodeStrict(raw)
	if err != nil {
		return h, fmt.Errorf("protected header: %w", err)
	}
	p, ok := v.(map[string]any)
	if !ok {
		return h, errors.New("protected header is not a JSON object")
	}
	// RFC 7515 §7.2.1: the protected and unprotected header parameter
	// names MUST be disjoint.
	for k := range unprotected {
		if _, dup := p[k]; dup {
			return h, fmt.Errorf("header parameter %q is both protected and unprotected", k)
		}
	}
	str := func(m map[string]any, k string) (string, error) {
		x, ok := m[k]
		if !ok || x == nil { // PyJWT writes "jku": null
			return "", nil
		}
		s, ok := x.(string)
		if !ok {
			return "", fmt.Errorf("header parameter %q is not a string", k)
		}
		return s, nil
	}
	if h.alg, err = str(p, "alg"); err != nil {
		return h, err
	}
	if _, ok := unprotected["alg"]; ok {
		return h, errors.New("alg must be in the protected header")
	}
	if h.alg == "" {
		return h, errors.New("alg is missing from the protected header")
	}
	if h.kid, err = str(p, "kid"); err != nil {
		return h, err
	}
	if h.kid == "" {
		if h.kid, err = str(unprotected, "kid"); err != nil {
			return h, err
		}
		if h.kid != "" {
			h.notes = append(h.notes, "kid is in the unprotected header; A2A v1.0 §8.4.2 puts it in the protected header")
		}
	}
	if h.typ, err = str(p, "typ"); err != nil {
		return h, err
	}
	if h.typ != "" && !strings.EqualFold(h.typ, "JOSE") {
		h.notes = append(h.notes, fmt.Sprintf("typ is %q; A2A recommends JOSE", h.typ))
	}
	if h.jku, err = str(p, "jku"); err != nil {
		return h, err
	}
	if j, _ := str(unprotected, "jku"); j != "" {
		h.notes = append(h.notes, "jku in the unprotected header is not integrity-protected and was ignored")
	}
	if c, ok := p["crit"]; ok {
		h.hasCrit = true
		list, ok := c.([]any)
		if !ok || len(list) == 0 {
			return h, errors.New("crit must be a non-empty array (RFC 7515 §4.1.11)")
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return h, errors.New("crit entries must be strings")
			}
			h.crit = append(h.crit, s)
		}
	}
	if _, ok := unprotected["crit"]; ok {
		return h, errors.New("crit must be in the protected header (RFC 7515 §4.1.11)")
	}
	if b, ok := p["b64"]; ok {
		enc, ok := b.(bool)
		if !ok {
			return h, errors.New("header parameter \"b64\" is not a boolean (RFC 7797 §3)")
		}
		h.unencoded = !enc
	}
	if _, ok := unprotected["b64"]; ok {
		return h, errors.New("b64 must be in the protected header (RFC 7797 §3)")
	}
	return h, nil
}

// resolveKey selects the verification key for h. Pinned keys win over the
// jku; the jku is used only on the card's origin or a trusted one. A
// non-empty Result means no key could be used.
func (v *Verifier) resolveKey(ctx context.Context, h header, origins []string) (jose.JSONWebKey, *Signer, Result, string) {
	if v.opts.Keys != nil {
		pinned, err := v.opts.Keys.PinnedKeys(ctx, h.kid)
		if err != nil {
			return jose.JSONWebKey{}, nil, ResultKeyFetchFailed, fmt.Sprintf("reading the trust store: %v", err)
		}
		var applicable []PinnedKey
		for _, k := range pinned {
			if k.appliesTo(origins) {
				applicable = append(applicable, k)
			}
		}
		switch len(applicable) {
		case 0:
		case 1:
			k := applicable[0]
			src := k.Source
			if src == "" {
				src = KeySourcePinned
			}
			s := describeKey(h.kid, k.Key, src, "")
			now := v.now()
			if !k.RevokedAt.IsZero() && !now.Before(k.RevokedAt) {
				return jose.JSONWebKey{}, s, ResultKeyRevoked, fmt.Sprintf("pinned key %q was revoked at %s", h.kid, k.RevokedAt.UTC().Format("2006-01-02T15:04:05Z"))
			}
			if !k.NotAfter.IsZero() && now.After(k.NotAfter) {
				return jose.JSONWebKey{}, s, ResultKeyExpired, fmt.Sprintf("pinned key %q expired at %s", h.kid, k.NotAfter.UTC().Format("2006-01-02T15:04:05Z"))
			}
			return k.Key, s, "", ""
		default:
			return jose.JSONWebKey{}, nil, ResultUnknownKey, fmt.Sprintf("kid %q selects %d pinned keys; a kid must select exactly one", h.kid, len(applicable))
		}
	}
	if h.jku == "" {
		return jose.JSONWebKey{}, nil, ResultUnknownKey, fmt.Sprintf("kid %q is not pinned and the signature has no jku", h.kid)
	}
	return v.jkuKey(ctx, h, origins)
}

// jkuKey selects h.kid from the JWKS at h.jku, if that jku may be used: on
// the card's origin or a trusted one, over https. A non-empty Result means
// no key could be used.
func (v *Verifier) jkuKey(ctx context.Context, h header, origins []string) (jose.JSONWebKey, *Signer, Result, string) {
	u, err := url.Parse(h.jku)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return jose.JSONWebKey{}, nil, ResultMalformed, fmt.Sprintf("jku %q is not an absolute URL", h.jku)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && v.opts.AllowInsecureJKU:
	default:
		return jose.JSONWebKey{}, nil, ResultUntrustedKeySource, fmt.Sprintf("jku %q is not https", h.jku)
	}
	jo := origin(h.jku)
	src := KeySource("")
	switch {
	case slices.Contains(origins, jo):
		src = KeySourceJKU
	case slices.Contains(v.opts.TrustedJWKSOrigins, jo):
		src = KeySourceTrustedJKU
	default:
		return jose.JSONWebKey{}, nil, ResultUntrustedKeySource,
			fmt.Sprintf("jku %s is on origin %s, not the card's (%s) nor a trusted one; pin the key or trust the origin", h.jku, jo, strings.Join(origins, ", "))
	}
	keys, err := v.fetchJWKS(ctx, h.jku)
	if err != nil {
		msg := err.Error()
		if ue := (*url.Error)(nil); errors.As(err, &ue) || errors.Is(err, safehttp.ErrBodyTooLarge) {
			// A transport error names the address jku resolved to; the
			// report is shown to anyone reading the agent.
			msg = fmt.Sprintf("fetching the JWKS at %s: %s", h.jku, safehttp.Describe(hostOf(h.jku), err))
		}
		return jose.JSONWebKey{}, nil, ResultKeyFetchFailed, msg
	}
	var match []jose.JSONWebKey
	for _, k := range keys {
		if k.KeyID == h.kid {
			match = append(match, k)
		}
	}
	switch len(match) {
	case 0:
		return jose.JSONWebKey{}, nil, ResultUnknownKey, fmt.Sprintf("the JWKS at %s has no key %q", h.jku, h.kid)
	case 1:
		return match[0], describeKey(h.kid, match[0], src, h.jku), "", ""
	}
	return jose.JSONWebKey{}, nil, ResultUnknownKey, fmt.Sprintf("kid %q selects %d keys in %s; a kid must select exactly one", h.kid, len(match), h.jku)
}

// keyChange tells a signer's new key from a tampered card: the key pinned
// under the signature's kid does not verify it, but the key its jku
// publishes under that kid, on a source the registry trusts (the card's
// own origin over https, or a trusted origin), does. That is a key change
// (rotation), to be reported as one and confirmed by pinning the new key;
// the card is signed as a jku-only signature would be. nil when no other
// trusted key verifies.
func (v *Verifier) keyChange(ctx context.Context, h header, was *Signer, jws *jose.JSONWebSignature, seen []formPayload, origins []string) *SignatureResult {
	if was == nil || h.jku == "" || (was.Source != KeySourcePinned && was.Source != KeySourceCLI) {
		return nil
	}
	key, signer, r, _ := v.jkuKey(ctx, h, origins)
	if r != "" || signer.Thumbprint == was.Thumbprint {
		return nil
	}
	if key.Algorithm != "" && key.Algorithm != h.alg || key.Use != "" && key.Use != "sig" {
		return nil
	}
	for _, fp := range seen {
		if jws.DetachedVerify(fp.payload, key.Key) != nil {
			continue
		}
		return &SignatureResult{Form: fp.form, Signer: signer, Problem: fmt.Sprintf(
			"the signer changed keys: kid %q is pinned to key %s, but the card is now signed by key %s from %s (%s), which verifies it over the %s form. "+
				"Pin the new key, or revoke the old one, if the change is expected; until then the signature is trusted as far as its jku is",
			h.kid, was.Thumbprint, signer.Thumbprint, h.jku, trustWords(trustOf(signer.Source)), fp.form)}
	}
	return nil
}

// trustWords says what vouches for a key, for problem texts.
func trustWords(t Trust) string {
	switch t {
	case TrustPinned:
		return "a pinned key"
	case TrustTrustedOrigin:
		return "on an origin the operator trusts"
	}
	return "on the card's own origin"
}
