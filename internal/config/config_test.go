package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, groups Group, args []string, env map[string]string) (Config, *flag.FlagSet, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg, err := Load(fs, groups, args, func(k string) string { return env[k] })
	return cfg, fs, err
}

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	cfg, _, err := load(t, All, nil, nil)
	if err != nil {
		t.Fatalf("Load with nothing set: %v", err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("Load with nothing set = %+v, want Default() %+v", cfg, Default())
	}
	if cfg.Server.Listen != "127.0.0.1:8080" || cfg.Storage.DB != "sqlite:./data/registry.db" || cfg.Outbound.MaxCardBytes != 1<<20 || !cfg.Storage.ImportExamples {
		t.Errorf("defaults changed: %+v", cfg)
	}
}

func TestLoadPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(Config) bool
	}{
		{"env sets listen", nil, map[string]string{"REGISTRY_LISTEN": "127.0.0.1:9000"},
			func(c Config) bool { return c.Server.Listen == "127.0.0.1:9000" }},
		{"flag wins over env", []string{"--listen", "[::1]:9001"}, map[string]string{"REGISTRY_LISTEN": "127.0.0.1:9000"},
			func(c Config) bool { return c.Server.Listen == "[::1]:9001" }},
		{"empty env is unset", nil, map[string]string{"REGISTRY_DB": ""},
			func(c Config) bool { return c.Storage.DB == DefaultDB }},
		{"env db", nil, map[string]string{"REGISTRY_DB": "postgres://u@db:5432/reg?sslmode=disable"},
			func(c Config) bool { return c.Storage.DB == "postgres://u@db:5432/reg?sslmode=disable" }},
		{"env bool false", nil, map[string]string{"REGISTRY_IMPORT_EXAMPLES": "false"},
			func(c Config) bool { return !c.Storage.ImportExamples }},
		{"flag bool without value", []string{"--listen=0.0.0.0:8080", "--insecure-allow-remote"}, nil,
			func(c Config) bool { return c.Server.InsecureAllowRemote && c.Server.Listen == "0.0.0.0:8080" }},
		{"flag bool =false beats env true", []string{"--import-examples=false"}, map[string]string{"REGISTRY_IMPORT_EXAMPLES": "true"},
			func(c Config) bool { return !c.Storage.ImportExamples }},
		{"env networks", nil, map[string]string{"REGISTRY_ALLOW_NETWORKS": "10.0.0.0/8, 192.168.1.7 ,fd00::/8"},
			func(c Config) bool {
				return reflect.DeepEqual(c.Outbound.AllowNetworks, []netip.Prefix{
					netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("fd00::/8")})
			}},
		{"repeated flag appends and replaces env", []string{"--allow-networks", "10.0.0.0/8", "--allow-networks", "172.16.0.0/12"},
			map[string]string{"REGISTRY_ALLOW_NETWORKS": "192.168.0.0/16"},
			func(c Config) bool {
				return reflect.DeepEqual(c.Outbound.AllowNetworks, []netip.Prefix{
					netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12")})
			}},
		{"log level and format", []string{"--log-level", "debug"}, map[string]string{"REGISTRY_LOG_FORMAT": "json"},
			func(c Config) bool { return c.Log.Level == slog.LevelDebug && c.Log.Format == LogFormatJSON }},
		{"durations", []string{"--fetch-timeout", "3s"}, map[string]string{"REGISTRY_SHUTDOWN_TIMEOUT": "1m"},
			func(c Config) bool {
				return c.Outbound.FetchTimeout == 3*time.Second && c.Server.ShutdownTimeout == time.Minute
			}},
		{"size suffix", []string{"--max-card-bytes", "256KiB"}, nil,
			func(c Config) bool { return c.Outbound.MaxCardBytes == 256<<10 }},
		{"localhost is loopback", []string{"--listen", "localhost:8080"}, nil,
			func(c Config) bool { return c.Server.Listen == "localhost:8080" }},
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

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantMsg string // what the operator must read: the message is the CLI's output
	}{
		{"listen without port", []string{"--listen", "127.0.0.1"}, nil, "listen address"},
		{"listen bad port", []string{"--listen", "127.0.0.1:http99"}, nil, "port"},
		{"listen port too big", []string{"--listen", "127.0.0.1:70000"}, nil, "port"},
		{"remote without opt-in", []string{"--listen", "0.0.0.0:8080"}, nil, "insecure-allow-remote"},
		{"all interfaces without opt-in", []string{"--listen", ":8080"}, nil, "insecure-allow-remote"},
		{"hostname without opt-in", []string{"--listen", "example.com:8080"}, nil, "insecure-allow-remote"},
		{"unknown db scheme", []string{"--db", "mysql://root@db/reg"}, nil, `unknown scheme "mysql"`},
		{"empty sqlite path", []string{"--db", "sqlite:"}, nil, "SQLite file path"},
		{"empty db flag", []string{"--db", ""}, nil, "empty DSN"},
		{"env bad cidr names variable", nil, map[string]string{"REGISTRY_ALLOW_NETWORKS": "intranet"}, "REGISTRY_ALLOW_NETWORKS"},
		{"zero card size", []string{"--max-card-bytes", "0"}, nil, "max-card-bytes must be positive"},
		{"negative card size", nil, map[string]string{"REGISTRY_MAX_CARD_BYTES": "-1"}, "max-card-bytes must be positive"},
		{"zero fetch timeout", []string{"--fetch-timeout", "0s"}, nil, "fetch-timeout must be positive"},
		{"negative shutdown timeout", []string{"--shutdown-timeout", "-1s"}, nil, "shutdown-timeout must be positive"},
		{"zero crawl concurrency", []string{"--crawl-concurrency", "0"}, nil, "crawl-concurrency must be 1 to 10000"},
		{"zero per-host", nil, map[string]string{"REGISTRY_CRAWL_PER_HOST": "0"}, "crawl-per-host must be at least 1"},
		{"max interval below min", []string{"--crawl-min-interval", "1h", "--crawl-max-interval", "30m"}, nil, "crawl-max-interval (30m0s) is shorter"},
		{"down after zero", []string{"--crawl-down-after", "0"}, nil, "crawl-down-after must be at least 1"},
		{"probes without fetch", []string{"--verify-probes", "--verify-fetch=false"}, nil, "verify-probes needs verify-fetch"},
		{"retention under a week", []string{"--fetch-log-retention", "24h"}, nil, "fetch-log-retention must be at least 168h"},
		{"bad log format", []string{"--log-format", "xml"}, nil, "log-format"},
		{"bad ard publish", []string{"--ard-publish", "everything"}, nil, "ard-publish"},
		{"ard publish empty collection", []string{"--ard-publish", "collection:"}, nil, "ard-publish"},
		{"bad log level env", nil, map[string]string{"REGISTRY_LOG_LEVEL": "loud"}, "REGISTRY_LOG_LEVEL"},
		{"bad bool env", nil, map[string]string{"REGISTRY_IMPORT_EXAMPLES": "yes please"}, "REGISTRY_IMPORT_EXAMPLES"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := load(t, All, tt.args, tt.env)
			if err == nil {
				t.Fatal("Load succeeded, want error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
		})
	}
}

// TestLoadRejectsSyntax: values the flag parser refuses. The flag
// package's error carries no sentinel: the command prints its usage with
// it, so what the operator reads is what is checked, and that it is not
// mistaken for a validation failure.
func TestLoadRejectsSyntax(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantMsg string
	}{
		{"bad cidr", []string{"--allow-networks", "10.0.0.0/33"}, nil, "10.0.0.0/33"},
		{"zoned address", []string{"--allow-networks", "fe80::1%eth0"}, nil, "fe80::1%eth0"},
		{"cidr host bits", []string{"--allow-networks", "10.1.2.3/8"}, nil, "did you mean 10.0.0.0/8"},
		{"garbage card size", []string{"--max-card-bytes", "1GB"}, nil, "KiB or MiB"},
		{"crawl concurrency not a number", []string{"--crawl-concurrency", "many"}, nil, "want a whole number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := load(t, All, tt.args, tt.env)
			if err == nil || errors.Is(err, ErrInvalid) {
				t.Fatalf("Load = %v, want a flag syntax error", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestLoadErrorsAreTyped(t *testing.T) {
	_, _, err := load(t, All, []string{"--db", "mysql://x"}, nil)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("validation error %v does not wrap ErrInvalid", err)
	}
	_, _, err = load(t, All, []string{"-h"}, nil)
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h gave %v, want flag.ErrHelp", err)
	}
}

func TestPostgresPasswordNotEchoed(t *testing.T) {
	_, _, err := load(t, All, []string{"--db", "postgres://u:s3cret@db:bad port/x"}, nil)
	if err == nil {
		t.Fatal("malformed URL accepted")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error leaks the password: %v", err)
	}
}

func TestGroupsLimitFlags(t *testing.T) {
	_, fs, err := load(t, Logging|Storage, []string{"--listen", "127.0.0.1:1"}, nil)
	if err == nil || errors.Is(err, ErrInvalid) || fs.Lookup("listen") != nil {
		t.Errorf("--listen accepted or defined by a Storage-only command: %v", err)
	}
	// A variable of another group is ignored, not validated.
	cfg, fs, err := load(t, Logging|Storage, []string{"--db", "x.db", "a.json", "b.json"},
		map[string]string{"REGISTRY_LISTEN": "not an address"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.Server.Listen != DefaultListen || cfg.Storage.DB != "x.db" {
		t.Errorf("cfg = %+v", cfg)
	}
	if got := fs.Args(); !reflect.DeepEqual(got, []string{"a.json", "b.json"}) {
		t.Errorf("positional args = %v", got)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"1MiB", 1 << 20, true},
		{"64KiB", 64 << 10, true},
		{"MiB", 0, false},
		{"1.5MiB", 0, false},
		{"99999999999999999MiB", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	tests := map[string]bool{
		"127.0.0.1": true, "127.3.2.1": true, "::1": true, "localhost": true, "LocalHost": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false, "localhost.evil.com": false,
	}
	for host, want := range tests {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestOperationsDocListsEverySetting keeps the configuration tables of
// docs/operations.md honest.
func TestOperationsDocListsEverySetting(t *testing.T) {
	// The docs ship with the module: missing, they document nothing.
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatalf("docs/operations.md not readable: %v", err)
	}
	for _, s := range Settings() {
		for _, name := range []string{"--" + s.Flag, s.Env} {
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("docs/operations.md does not document `%s`", name)
			}
		}
	}
}

func TestAcceptedHosts(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr bool
	}{
		{name: "defaults", want: []string{"localhost", "127.0.0.1", "::1", "127.0.0.1"}},
		{name: "public URL and list", args: []string{"--public-url", "https://registry.example.com/", "--allowed-hosts", "Reg.Internal, [fd00::1]"},
			want: []string{"localhost", "127.0.0.1", "::1", "127.0.0.1", "registry.example.com", "reg.internal", "fd00::1"}},
		{name: "host with a port", args: []string{"--allowed-hosts", "reg.internal:8080"}, wantErr: true},
		{name: "public URL without scheme", args: []string{"--public-url", "registry.example.com"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(flag.NewFlagSet("t", flag.ContinueOnError), All, tt.args, func(string) string { return "" })
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Server.AcceptedHosts(); !slices.Equal(got, tt.want) {
				t.Errorf("AcceptedHosts = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOAuthTokenHosts(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		want []string // nil: refused
	}{
		{"Tokens.Example, id.example.com:8443", []string{"tokens.example", "id.example.com:8443"}},
		{"[fd00::1]:9443", []string{"[fd00::1]:9443"}},
		{"https://tokens.example", nil},
		{"tokens.example/token", nil},
		{"user@tokens.example", nil},
		{"tokens.example:", nil},
		{":443", nil},
	} {
		cfg, err := Load(flag.NewFlagSet("t", flag.ContinueOnError), All, []string{"--oauth-token-hosts", tt.arg}, func(string) string { return "" })
		if tt.want == nil {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%q: err = %v, want ErrInvalid", tt.arg, err)
			}
			continue
		}
		if err != nil || !slices.Equal(cfg.Runs.OAuthTokenHosts, tt.want) {
			t.Errorf("%q: %q, %v; want %q", tt.arg, cfg.Runs.OAuthTokenHosts, err, tt.want)
		}
	}
}

func TestEmbeddingsSettings(t *testing.T) {
	base := []string{"--embeddings-url", "http://127.0.0.1:8081/v1", "--embeddings-model", "all-minilm", "--embeddings-dimension", "384"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr bool
	}{
		{name: "off by default"},
		{name: "on", args: base},
		{name: "key from the environment", args: base, env: map[string]string{"REGISTRY_EMBEDDINGS_API_KEY": "sk-1"}},
		{name: "weights", args: append(slices.Clone(base), "--embeddings-vector-weight", "0.5", "--embeddings-min-similarity", "0.3")},
		{name: "model without url", args: []string{"--embeddings-model", "m"}, wantErr: true},
		{name: "no model", args: []string{"--embeddings-url", "http://127.0.0.1:8081", "--embeddings-dimension", "384"}, wantErr: true},
		{name: "no dimension", args: base[:4], wantErr: true},
		{name: "not http", args: append(slices.Clone(base), "--embeddings-url", "file:///tmp/x"), wantErr: true},
		{name: "credentials in the url", args: append(slices.Clone(base), "--embeddings-url", "http://u:p@127.0.0.1/v1"), wantErr: true},
		{name: "both weights zero", args: append(slices.Clone(base), "--embeddings-vector-weight", "0", "--embeddings-lexical-weight", "0"), wantErr: true},
		{name: "similarity out of range", args: append(slices.Clone(base), "--embeddings-min-similarity", "2"), wantErr: true},
		{name: "weight not a number", args: append(slices.Clone(base), "--embeddings-vector-weight", "high"), wantErr: true},
		{name: "key twice", args: append(slices.Clone(base), "--embeddings-api-key-file", "/k"), env: map[string]string{"REGISTRY_EMBEDDINGS_API_KEY": "sk-1"}, wantErr: true},
		{name: "prefixes", args: append(slices.Clone(base), "--embeddings-query-prefix", "query: "), env: map[string]string{"REGISTRY_EMBEDDINGS_DOCUMENT_PREFIX": "passage: "}},
		{name: "prefix without url", args: []string{"--embeddings-document-prefix", "passage: "}, wantErr: true},
		{name: "prefix too long", args: append(slices.Clone(base), "--embeddings-query-prefix", strings.Repeat("q", MaxEmbeddingsPrefix+1)), wantErr: true},
		{name: "line break in the model", args: append(slices.Clone(base), "--embeddings-model", "m\npassage: "), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			cfg, err := Load(fs, All, tt.args, func(k string) string { return tt.env[k] })
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Load = %+v, want an error", cfg.Embeddings)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%v %+v", cfg.Embeddings.APIKey, cfg.Embeddings); strings.Contains(got, "sk-1") {
				t.Fatalf("the API key prints: %s", got)
			}
		})
	}
}

// TestEmbeddingsPrefixes holds that a prefix is kept as given, its
// trailing space too: "query:" and "query: " are different instructions.
func TestEmbeddingsPrefixes(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	args := []string{"--embeddings-url", "http://127.0.0.1:8081/v1", "--embeddings-model", "nomic-embed-text", "--embeddings-dimension", "768",
		"--embeddings-query-prefix", "search_query: "}
	env := map[string]string{"REGISTRY_EMBEDDINGS_DOCUMENT_PREFIX": "search_document: "}
	cfg, err := Load(fs, All, args, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if e := cfg.Embeddings; e.QueryPrefix != "search_query: " || e.DocumentPrefix != "search_document: " {
		t.Fatalf("prefixes %q and %q", e.QueryPrefix, e.DocumentPrefix)
	}
}
