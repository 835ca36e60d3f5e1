package ard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// errBadToken: a page token this door did not issue, altered, or issued
// for another search.
var errBadToken = errors.New("invalid page token")

// maxTokenLen bounds a page token before any work is spent on it.
const maxTokenLen = 4096

// page is what a page token carries: the catalog's cursor, the best
// relevance of the search (so that scores keep one scale across pages),
// and which search it continues (the route, so a token of one cannot page
// another).
type page struct {
	Route  string  `json:"r"`
	Cursor string  `json:"c"`
	Top    float64 `json:"t,omitempty"`
}

// tokenSigner makes page tokens opaque (base64url) and tamper-evident: an
// HMAC-SHA256 tag over the payload (ADR 0002 asks for opaque tokens; the tag
// refuses forged positions before the catalog reads them). The catalog's
// cursor beneath is tied to the query and the scope it was made for.
type tokenSigner struct{ key []byte }

func newTokenSigner(key []byte) tokenSigner {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24)
	}
	return tokenSigner{key: key}
}

func (s tokenSigner) tag(payload string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

func (s tokenSigner) encode(p page) string {
	b, _ := json.Marshal(p) // strings and a float always marshal
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + s.tag(payload)
}

func (s tokenSigner) decode(tok, route string) (page, error) {
	if tok == "" {
		return page{}, nil
	}
	payload, tag, ok := strings.Cut(tok, ".")
	if !ok || len(tok) > maxTokenLen || !hmac.Equal([]byte(tag), []byte(s.tag(payload))) {
		return page{}, errBadToken
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return page{}, errBadToken
	}
	var p page
	if err := json.Unmarshal(b, &p); err != nil || p.Route != route || p.Cursor == "" {
		return page{}, errBadToken
	}
	return p, nil
}
