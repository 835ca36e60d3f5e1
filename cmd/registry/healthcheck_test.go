package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func TestHealthcheckURL(t *testing.T) {
	tests := []struct{ listen, want string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080/readyz"},
		{"0.0.0.0:8080", "http://127.0.0.1:8080/readyz"},
		{":8080", "http://127.0.0.1:8080/readyz"},
		{"[::]:8080", "http://[::1]:8080/readyz"},
		{"[::1]:9000", "http://[::1]:9000/readyz"},
		{"registry.internal:8080", "http://registry.internal:8080/readyz"},
	}
	for _, tt := range tests {
		got, err := healthcheckURL(tt.listen, "/readyz")
		if err != nil || got != tt.want {
			t.Errorf("healthcheckURL(%q) = %q, %v; want %q", tt.listen, got, err, tt.want)
		}
	}
	if _, err := healthcheckURL("8080", "/readyz"); err == nil {
		t.Error("a listen address without a port was accepted")
	}
}

func TestHealthcheck(t *testing.T) {
	ready := startServe(t, catalogtest.SQLiteDSN(t))
	unready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"status":"not_ready","reason":"index_building"}`, http.StatusServiceUnavailable)
	}))
	defer unready.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	host := func(raw string) string {
		u, _ := url.Parse(raw)
		return u.Host
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"ready server", []string{"--listen", host(ready)}, nil, exitOK},
		{"address from the environment", nil, map[string]string{"REGISTRY_LISTEN": host(ready)}, exitOK},
		{"liveness", []string{"--listen", host(ready), "--path", "/healthz"}, nil, exitOK},
		{"not ready", []string{"--listen", host(unready.URL)}, nil, exitFail},
		{"nothing listening", []string{"--listen", host(closed.URL)}, nil, exitFail},
		{"bad address", []string{"--listen", "nonsense"}, nil, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got int
			waitUntil(t, 20*time.Second, "the expected answer", func() bool {
				// The real server answers 503 until its index is built.
				got = run(t.Context(), append([]string{"healthcheck"}, tt.args...), io.Discard, io.Discard,
					func(k string) string { return tt.env[k] })
				return got == tt.want
			})
		})
	}
}
