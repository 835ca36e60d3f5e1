package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// signIn is the least a configuration with a provider needs.
var signIn = []string{"--oidc-issuer", "https://id.example.com/realms/x", "--oidc-client-id", "registry",
	"--oidc-api-audience", "registry-api", "--public-url", "https://registry.example.com"}

func TestLoadSignIn(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(Config) bool
	}{
		{"defaults: development mode", nil, nil, func(c Config) bool {
			return !c.SignIn() && c.Auth.DefaultRole == "viewer" && c.Auth.AnonymousRole == RoleNone && c.Auth.RolesClaim == "groups"
		}},
		{"provider allows a remote listen address", append([]string{"--listen", "0.0.0.0:8080"}, signIn...), nil,
			func(c Config) bool { return c.SignIn() && c.Server.Listen == "0.0.0.0:8080" }},
		{"http issuer on loopback", []string{"--oidc-issuer", "http://127.0.0.1:5556/dex", "--oidc-client-id", "r", "--oidc-api-audience", "r-api", "--public-url", "http://127.0.0.1:8080"}, nil,
			func(c Config) bool { return c.SignIn() }},
		{"repeated roles append, env separates with semicolons",
			append([]string{"--oidc-role", "admin=cn=admins,ou=groups,dc=example", "--oidc-role", "Editor=eng"}, signIn...), nil,
			func(c Config) bool {
				return reflect.DeepEqual(c.Auth.Roles, []RoleClaim{{"admin", "cn=admins,ou=groups,dc=example"}, {"editor", "eng"}})
			}},
		{"roles from env", signIn, map[string]string{"REGISTRY_OIDC_ROLE": "viewer=all; tester=qa"},
			func(c Config) bool {
				return reflect.DeepEqual(c.Auth.Roles, []RoleClaim{{"viewer", "all"}, {"tester", "qa"}})
			}},
		{"scopes replace the default", append([]string{"--oidc-scopes", "openid,email,groups"}, signIn...), nil,
			func(c Config) bool { return reflect.DeepEqual(c.Auth.Scopes, []string{"openid", "email", "groups"}) }},
		{"the operator accepts sign-in tokens on the API", []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "r",
			"--public-url", "https://r.example.com", "--oidc-api-accepts-client-id"}, nil,
			func(c Config) bool { return c.Auth.APIAcceptsClientID && c.Auth.APIAudience == "" }},
		{"public url defaults to a loopback listen address", []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "r",
			"--oidc-api-audience", "r-api", "--listen", "127.0.0.1:9090"}, nil,
			func(c Config) bool { return c.Server.PublicURL == "http://127.0.0.1:9090" }},
		{"public url defaults to a loopback IPv6 listen address", []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "r",
			"--oidc-api-audience", "r-api", "--listen", "[::1]:9090"}, nil,
			func(c Config) bool { return c.Server.PublicURL == "http://[::1]:9090" }},
		{"a given public url wins over the listen address", append([]string{"--listen", "127.0.0.1:9090"}, signIn...), nil,
			func(c Config) bool { return c.Server.PublicURL == "https://registry.example.com" }},
		{"development mode keeps no public url", nil, nil,
			func(c Config) bool { return c.Server.PublicURL == "" }},
		{"none default role and viewer anonymous", append([]string{"--oidc-default-role", "none", "--anonymous-role", "viewer"}, signIn...), nil,
			func(c Config) bool { return c.Auth.DefaultRole == RoleNone && c.Auth.AnonymousRole == "viewer" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := load(t, All, tt.args, tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !tt.check(cfg) {
				t.Errorf("unexpected config %+v", cfg)
			}
		})
	}
}

func TestLoadRejectsSignIn(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"issuer without client id", []string{"--oidc-issuer", "https://id.example.com", "--public-url", "https://r.example.com"}, nil},
		// Only a loopback listen address says where users reach the
		// registry; behind a proxy the operator must say.
		{"issuer without public url on a remote listen address", []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "r",
			"--oidc-api-audience", "r-api", "--listen", "0.0.0.0:8080"}, nil},
		{"plain http issuer elsewhere", []string{"--oidc-issuer", "http://id.example.com", "--oidc-client-id", "r", "--public-url", "https://r.example.com"}, nil},
		{"issuer with a query", []string{"--oidc-issuer", "https://id.example.com/?tenant=1", "--oidc-client-id", "r", "--public-url", "https://r.example.com"}, nil},
		{"client id without issuer", []string{"--oidc-client-id", "r"}, nil},
		// Tokens the provider issues to the console's client name its
		// client id: the API must not take them unless the operator says so.
		{"no API audience", []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "r", "--public-url", "https://r.example.com"}, nil},
		{"API audience is the client id", []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "r",
			"--oidc-api-audience", "r", "--public-url", "https://r.example.com"}, nil},
		{"accepting the client id without issuer", []string{"--oidc-api-accepts-client-id"}, nil},
		{"secret without issuer", nil, map[string]string{"REGISTRY_OIDC_CLIENT_SECRET": "s3cret"}},
		{"secret and secret file", append([]string{"--oidc-client-secret", "a", "--oidc-client-secret-file", "/x"}, signIn...), nil},
		{"unknown default role", append([]string{"--oidc-default-role", "owner"}, signIn...), nil},
		{"unknown anonymous role", []string{"--anonymous-role", "everyone"}, nil},
		{"idle longer than max", []string{"--session-idle", "48h", "--session-max", "24h"}, nil},
		{"zero idle", []string{"--session-idle", "0s"}, nil},
		{"scopes without openid", append([]string{"--oidc-scopes", "email"}, signIn...), nil},
		{"public url without scheme", []string{"--public-url", "registry.example.com"}, nil},
		{"remote listen in development mode", []string{"--listen", "0.0.0.0:8080"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := load(t, All, tt.args, tt.env); !errors.Is(err, ErrInvalid) {
				t.Errorf("Load = %v, want ErrInvalid", err)
			}
		})
	}
}

// TestLoadRejectsRoleSyntax: a malformed mapping is a flag syntax error.
func TestLoadRejectsRoleSyntax(t *testing.T) {
	for _, v := range []string{"admin", "admin=", "owner=x"} {
		if _, _, err := load(t, All, append([]string{"--oidc-role", v}, signIn...), nil); err == nil {
			t.Errorf("--oidc-role %q accepted", v)
		}
	}
}

// TestSecretNeverPrinted formats a configuration every way a log line or
// an error message might.
func TestSecretNeverPrinted(t *testing.T) {
	const secret = "hunter2-very-secret"
	cfg, fs, err := load(t, All, signIn, map[string]string{"REGISTRY_OIDC_CLIENT_SECRET": secret})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.ClientSecret.Reveal() != secret {
		t.Fatalf("secret not loaded: Reveal = %q", cfg.Auth.ClientSecret.Reveal())
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg, "secret", cfg.Auth.ClientSecret)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "secret", cfg.Auth.ClientSecret)
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", cfg), "%#v": fmt.Sprintf("%#v", cfg),
		"%s": fmt.Sprintf("%s", cfg.Auth.ClientSecret), "slog": logged.String(), "json": string(js),
		"flag": fs.Lookup("oidc-client-secret").Value.String(),
	}
	for how, out := range outputs {
		if strings.Contains(out, secret) {
			t.Errorf("%s prints the secret: %s", how, out)
		}
	}
}

func TestClientSecretFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret")
	if err := os.WriteFile(path, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := load(t, All, append([]string{"--oidc-client-secret-file", path}, signIn...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := cfg.Auth.Secret(); err != nil || s.Reveal() != "from-file" {
		t.Errorf("ClientSecret = %q, %v; want from-file", s.Reveal(), err)
	}
	cfg.Auth.ClientSecretFile = filepath.Join(dir, "missing")
	if _, err := cfg.Auth.Secret(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ClientSecret of a missing file = %v, want ErrNotExist", err)
	}
}

func TestSecretKeyFile(t *testing.T) {
	dir := t.TempDir()
	k1, k2 := strings.Repeat("ab", 32), strings.Repeat("0F", 32)
	tests := []struct {
		name, content string
		keys          int
		wantErr       string
	}{
		{"two keys, comments and blank lines", "# current\n" + k1 + "\n\n" + k2 + "\n", 2, ""},
		{"short key", k1[:62] + "\n", 0, "line 1 is not 32 hex-encoded bytes"},
		{"not hex", strings.Repeat("zz", 32), 0, "line 1 is not 32 hex-encoded bytes"},
		{"no key", "# nothing\n\n", 0, "holds no key"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprint(i))
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, _, err := load(t, All, []string{"--secret-key-file", path}, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), k1[:62]) || strings.Contains(err.Error(), "zzzz") {
					t.Errorf("the error repeats the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			keys, err := cfg.Storage.SecretKeys()
			if err != nil || len(keys) != tt.keys || len(keys[0]) != 32 || keys[0][0] != 0xab {
				t.Errorf("SecretKeys = %d keys, %v", len(keys), err)
			}
		})
	}
}
