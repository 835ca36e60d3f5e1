package verify

import (
	"fmt"
	"strings"
)

// FindingSigningKeyChanged: the card version is signed, and none of the
// keys that sign it signed the agent's previous version. Whatever the
// verdict — a valid signature by a new key is exactly what a stolen
// origin looks like — a security team wants to see the change. Warning.
// A rotation that signs one version with both the old and the new key,
// and then drops the old one, shares a key with each previous version and
// is no change.
const FindingSigningKeyChanged = "signing_key_changed"

// signingKey names the key behind one signature as well as the report
// knows it: by its RFC 7638 thumbprint when a key was selected, else by
// the kid and jku the signature names.
type signingKey struct{ thumbprint, kid, jku string }

func (k signingKey) String() string {
	if k.thumbprint != "" {
		return fmt.Sprintf("kid %q (thumbprint %s)", k.kid, k.thumbprint)
	}
	return fmt.Sprintf("kid %q", k.kid)
}

// same reports whether a and b are one key: thumbprints decide when both
// are known (a kid can be reused for another key, which is the change
// this finding is about); otherwise the kid and jku the signatures name.
func (a signingKey) same(b signingKey) bool {
	if a.thumbprint != "" && b.thumbprint != "" {
		return a.thumbprint == b.thumbprint
	}
	return a.kid != "" && a.kid == b.kid && a.jku == b.jku
}

func signingKeys(r SignatureReport) []signingKey {
	var out []signingKey
	for _, e := range r.Entries {
		k := signingKey{kid: e.KID, jku: e.JKU}
		if e.Signer != nil {
			k.thumbprint = e.Signer.Thumbprint
			if k.kid == "" {
				k.kid = e.Signer.KID
			}
		}
		if k.thumbprint != "" || k.kid != "" {
			out = append(out, k)
		}
	}
	return out
}

// keyChange compares the signatures of a card version with those of the
// agent's previous version (prevVersion) and returns the finding when
// both are signed and share no key; nil otherwise. An unsigned version on
// either side is no key change: the signature status says it.
func keyChange(prev, cur SignatureReport, prevVersion int) *Finding {
	before, now := signingKeys(prev), signingKeys(cur)
	if len(before) == 0 || len(now) == 0 {
		return nil
	}
	for _, n := range now {
		for _, b := range before {
			if n.same(b) {
				return nil
			}
		}
	}
	return &Finding{Code: FindingSigningKeyChanged, Severity: SeverityWarning, Path: "$.signatures",
		Message: fmt.Sprintf("signed by %s; version %d was signed by %s", keyList(now), prevVersion, keyList(before))}
}

func keyList(ks []signingKey) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k.String()
	}
	return strings.Join(parts, ", ")
}
