// Package templates holds the console's templ components. Run
// `go tool templ generate` after editing a .templ file and commit the
// generated *_templ.go files (CI fails when they are out of date).
package templates

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/a-h/templ"

	"github.com/a2aregistry/registry/internal/web/view"
)

// Text renders untrusted text (card fields) escaped, with every invisible
// formatting character — bidirectional overrides and isolates (U+202A–
// U+202E, U+2066–U+2069), zero-width characters (U+200B–U+200D, U+2060,
// U+FEFF) and the rest of Unicode category Cf — and every control character
// other than tab and newline shown as a visible badge such as ⟨U+202E⟩
// instead of being obeyed. A security reviewer must see what the bytes
// say: a right-to-left override can make "fdp.exe" read as "exe.pdf"
// (Unicode TR #36 §2.1; CVE-2021-42574, "Trojan Source").
func Text(s string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		return writeText(w, s)
	})
}

func writeText(w io.Writer, s string) error {
	start := 0
	for i, r := range s {
		if !hidden(r) {
			continue
		}
		if _, err := io.WriteString(w, templ.EscapeString(s[start:i])); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, `<span class="cp" title="invisible character U+%04X in the card">⟨U+%04X⟩</span>`, r, r); err != nil {
			return err
		}
		start = i + len(string(r))
	}
	_, err := io.WriteString(w, templ.EscapeString(s[start:]))
	return err
}

// hidden reports whether r changes how text reads without being seen.
// Invalid UTF-8 decodes as U+FFFD, which is visible.
func hidden(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// Visible is s with each character Text shows as a badge written as
// ⟨U+XXXX⟩ instead, for places that take text only (the page title).
func Visible(s string) string {
	if !HasHidden(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// HasHidden reports whether s holds a character Text shows as a badge.
func HasHidden(s string) bool {
	return strings.IndexFunc(s, hidden) >= 0
}

// linkURL returns u when a card's link may be rendered: an absolute
// http(s) URL. Anything else (javascript:, data:, relative paths that
// would point into the console) is shown as text only.
func linkURL(u string) (templ.SafeURL, bool) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", false
	}
	return templ.SafeURL(p.String()), true
}

// when formats a time for people, in UTC so every reader sees the same.
func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func datetime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// plural is "1 agent" or "2 agents".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// size formats a byte count.
func size(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

// badgeClass is the CSS class of a health or signature badge. The value
// comes from the registry's own enums; unknown ones get the neutral look.
func badgeClass(value string) string {
	switch value {
	case "up", "verified", "confirmed":
		return "badge ok"
	case "down", "invalid", "removed", "binding_mismatch", "error",
		"bad_signature", "malformed", "unsupported_algorithm", "unsupported_critical", "key_revoked", "key_expired",
		"unencoded_payload", "der_encoded_signature", "failed", "TASK_STATE_FAILED":
		return "badge bad"
	case "stale", "key_unavailable", "unreachable", "version_unconfirmed", "warning",
		"unsigned", "unknown_key", "untrusted_key_source", "key_fetch_failed", "key_changed":
		return "badge warn"
	}
	return "badge"
}

// worksClass colours the latest check's verdict on the declared
// interfaces: all worked, some did, none did.
func worksClass(works string) string {
	switch works {
	case "all":
		return "badge ok"
	case "some":
		return "badge warn"
	case "none":
		return "badge bad"
	}
	return "badge"
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func lineNo(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func diffClass(k view.DiffKind) string {
	switch k {
	case view.DiffChanged:
		return "changed"
	case view.DiffRemoved:
		return "removed"
	case view.DiffAdded:
		return "added"
	}
	return "same"
}

func registerClass(o view.RegisterOutcome) string {
	switch o {
	case view.RegisterCreated, view.RegisterUpdated, view.RegisterRestored:
		return "badge ok"
	case view.RegisterFailed:
		return "badge bad"
	}
	return "badge"
}

func keyClass(state string) string {
	switch state {
	case "active":
		return "badge ok"
	case "revoked":
		return "badge bad"
	}
	return "badge warn"
}

func keyUntil(state string) string {
	switch state {
	case "revoked":
		return "since"
	case "expired":
		return "on"
	}
	return "until"
}

// publisherProof says in words how a publisher proved it holds the
// signing key (verify.Proof*).
func publisherProof(proof string) string {
	switch proof {
	case "well_known_jwks":
		return "the key at the domain's /.well-known/jwks.json"
	case "jku":
		return "a jku on the domain"
	case "pinned_key":
		return "a key pinned for an origin on the domain"
	case "ard_manifest":
		return "the domain's ARD manifest"
	}
	return proof
}
