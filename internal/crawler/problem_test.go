package crawler

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// TestProblemOf checks the class of each failure and that its message,
// which is stored and shown to anyone reading the agent, names the user's
// host and never a resolved address, a socket address or the resolver's.
func TestProblemOf(t *testing.T) {
	const cardURL = "https://agent.example.com/.well-known/agent-card.json"
	transport := func(err error) error {
		return &url.Error{Op: "Get", URL: cardURL, Err: err}
	}
	socket := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp",
			Source: &net.TCPAddr{IP: net.ParseIP("10.9.8.7"), Port: 40404},
			Addr:   &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 443}, Err: err}
	}
	fetch := func(err error, status int) error {
		fe := classify(cardURL, status, err)
		return errors.Join(errors.New("registering"), fe)
	}
	secret := []string{"10.1.2.3", "10.9.8.7", "40404", "127.0.0.53", "api.", "*url.Error", "net.OpError"}
	tests := []struct {
		name      string
		err       error
		ok        bool
		class     string
		has       string
		parseCode string
	}{
		{
			name: "blocked address",
			err: fetch(transport(socket(&safehttp.BlockedError{Host: "agent.example.com",
				IP: netip.MustParseAddr("10.1.2.3"), Reason: "private (RFC 1918)"})), 0),
			ok: true, class: ClassBlockedAddress, has: "private (RFC 1918)",
		},
		{
			name: "DNS failure names no resolver",
			err: fetch(transport(socket(&net.DNSError{Err: "server misbehaving", Name: "agent.example.com",
				Server: "127.0.0.53:53"})), 0),
			ok: true, class: ClassDNS, has: "agent.example.com",
		},
		{
			name: "reserved name says why it is not looked up",
			err: fetch(transport(&net.OpError{Op: "dial", Net: "tcp",
				Err: &safehttp.ReservedNameError{Host: "agent.example.com", Domain: "example.com"}}), 0),
			ok: true, class: ClassReservedName, has: "agent.example.com is reserved for examples and testing",
		},
		{
			name: "refused connection names no socket",
			err:  fetch(transport(socket(errors.New("connect: connection refused"))), 0),
			ok:   true, class: ClassConnect, has: "agent.example.com",
		},
		{
			name: "redirect to file: is a redirect, not the user's URL",
			err: fetch(transport(&url.Error{Op: "Get", URL: "file:///etc/passwd",
				Err: errors.Join(safehttp.ErrRedirectRefused, safehttp.ErrUnsupportedScheme)}), 0),
			ok: true, class: ClassRedirect, has: "agent.example.com",
		},
		{
			name: "oversized headers",
			err:  fetch(transport(errors.Join(safehttp.ErrHeadersTooLarge, errors.New("net/http: server response headers exceeded 65536 bytes"))), 0),
			ok:   true, class: ClassTooLarge, has: "headers",
		},
		{
			name: "HTTP status",
			err:  &FetchError{Class: ClassHTTP5xx, URL: cardURL, Status: 503, Err: ErrHTTPStatus},
			ok:   true, class: ClassHTTP5xx, has: "503",
		},
		{
			name: "card refused by the parser",
			err:  errors.Join(errors.New("registering"), &card.ParseError{Code: card.CodeDuplicateKey, Path: "$", Message: "duplicate"}),
			ok:   true, class: ClassNotACard, has: "duplicate", parseCode: card.CodeDuplicateKey,
		},
		{
			name: "invalid input",
			err:  &FetchError{Class: ClassInvalidURL, URL: "ftp://x", Err: errors.Join(ErrInvalidURL, errors.New("scheme"))},
			ok:   true, class: ClassInvalidURL, has: "invalid card URL",
		},
		{
			name: "the store's fault is not a problem of the agent",
			err:  errors.New("database is locked"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := ProblemOf(tt.err)
			if ok != tt.ok || p.Class != tt.class || p.ParseCode != tt.parseCode {
				t.Fatalf("ProblemOf = %+v, %v; want class %q ok %v parse code %q", p, ok, tt.class, tt.ok, tt.parseCode)
			}
			if !strings.Contains(p.Message, tt.has) {
				t.Errorf("message %q lacks %q", p.Message, tt.has)
			}
			for _, s := range secret {
				if strings.Contains(p.Message, s) {
					t.Errorf("message %q shows %q", p.Message, s)
				}
			}
		})
	}
}
