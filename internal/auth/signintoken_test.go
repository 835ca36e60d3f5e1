package auth

import (
	"testing"
	"time"
)

func TestNamesIssuer(t *testing.T) {
	const iss = "https://id.example.com/realms/a2a"
	for _, tt := range []struct {
		url, issuer string
		want        bool
	}{
		{iss + "/.well-known/openid-configuration", iss, true},
		{iss, iss, true},
		{iss + "/", iss + "/", true},
		{iss + "/.well-known/openid-configuration", iss + "/", true},
		{"https://id.example.com/realms/other/.well-known/openid-configuration", iss, false},
		{"https://id.example.com.evil.example/realms/a2a/.well-known/openid-configuration", iss, false},
		{iss + "x/.well-known/openid-configuration", iss, false},
		{"", iss, false},
		{iss, "", false},
	} {
		if got := NamesIssuer(tt.url, tt.issuer); got != tt.want {
			t.Errorf("NamesIssuer(%q, %q) = %v, want %v", tt.url, tt.issuer, got, tt.want)
		}
	}
}

func TestSignInTokensBounded(t *testing.T) {
	var s signInTokens
	now := time.Now()
	for i := range maxSignInTokens + 5 {
		s.put(string(rune('a'+i%26))+time.Duration(i).String(), "tok", now.Add(time.Duration(i)*time.Second+time.Hour), now)
	}
	if len(s.m) > maxSignInTokens {
		t.Errorf("%d tokens held, bound %d", len(s.m), maxSignInTokens)
	}
	s.put("x", "tok-x", now.Add(time.Minute), now)
	if _, ok := s.get("x", now.Add(2*time.Minute)); ok {
		t.Error("an expired token was returned")
	}
}
