package api

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestDeclaredBodies: a body over the cap is refused before a byte of it
// is read, even with Expect: 100-continue; a declared body that never
// comes is answered at the body deadline with 408, not held until the
// server's ReadTimeout and answered with a socket error.
func TestDeclaredBodies(t *testing.T) {
	env := testEnv{e: echo.New()}
	a := New(Options{Catalog: newFakeCatalog(), Registrar: &fakeRegistrar{}, Refresher: &fakeRefresher{cat: newFakeCatalog()}})
	a.bodyTimeout = 300 * time.Millisecond
	a.Mount(env.e)
	srv := httptest.NewServer(env.e)
	defer srv.Close()
	tests := []struct {
		name       string
		request    string
		wantStatus int
	}{
		{"huge body with Expect: 100-continue", "POST /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
			"Content-Type: application/json\r\nContent-Length: 52428800\r\nExpect: 100-continue\r\n\r\n", http.StatusRequestEntityTooLarge},
		{"huge body on refresh", "POST /api/v1/agents/a1/refresh HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
			"Content-Type: application/json\r\nContent-Length: 52428800\r\n\r\n", http.StatusRequestEntityTooLarge},
		{"declared body never sent", "POST /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
			"Content-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"url\":", http.StatusRequestTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// A bound for the test itself, far above the body deadline and
			// far below the 30 s the attack run saw.
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := conn.Write([]byte(tt.request)); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d (a 100 here means the body was invited)", resp.StatusCode, tt.wantStatus)
			}
		})
	}
}
