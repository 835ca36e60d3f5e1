package main

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestListenKeepsIPv4WildcardIPv4: 0.0.0.0 under --insecure-allow-remote
// must not also bind [::] (issue 10 finding 11).
func TestListenKeepsIPv4WildcardIPv4(t *testing.T) {
	tests := []struct {
		addr   string
		wantV4 bool
	}{
		{"0.0.0.0:0", true},
		{"127.0.0.1:0", true},
		{"[::1]:0", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ln, err := listenTCP(tt.addr)
			if err != nil {
				t.Skipf("cannot listen on %s here: %v", tt.addr, err)
			}
			defer ln.Close()
			ip := ln.Addr().(*net.TCPAddr).IP
			if (ip.To4() != nil) != tt.wantV4 {
				t.Errorf("listening on %s for %s", ln.Addr(), tt.addr)
			}
		})
	}
}

// TestRequestLogUsesSocketAddress: X-Forwarded-For and X-Real-IP are
// anyone's to send; the request log records the peer (finding 6).
func TestRequestLogUsesSocketAddress(t *testing.T) {
	var logs bytes.Buffer
	h := newHandler(handlerDeps{log: slog.New(slog.NewTextHandler(&logs, nil)), hosts: []string{"localhost"}})
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	req.Host = "localhost:8080"
	req.RemoteAddr = "192.0.2.1:4242"
	req.Header.Set("X-Forwarded-For", "198.51.100.7")
	req.Header.Set("X-Real-IP", "198.51.100.8")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if out := logs.String(); !strings.Contains(out, "remote_ip=192.0.2.1") || strings.Contains(out, "198.51.100.") {
		t.Errorf("request log trusts forwarding headers: %s", out)
	}
}

// TestServerRefusesForeignHosts: the Host allowlist covers every path,
// /healthz and /metrics included; HEAD works where GET does.
func TestServerRefusesForeignHosts(t *testing.T) {
	h := newHandler(handlerDeps{log: slog.New(slog.DiscardHandler), hosts: []string{"localhost"}})
	tests := []struct {
		method, host string
		want         int
	}{
		{http.MethodGet, "localhost:8080", http.StatusOK},
		{http.MethodHead, "localhost:8080", http.StatusOK},
		{http.MethodGet, "127.0.0.1:8080", http.StatusOK},
		{http.MethodGet, "rebound.attacker.example:8080", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, "/healthz", nil)
		req.Host = tt.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s /healthz Host %s = %d, want %d", tt.method, tt.host, rec.Code, tt.want)
		}
	}
}
