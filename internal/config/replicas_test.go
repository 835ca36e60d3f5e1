package config

import (
	"errors"
	"testing"
	"time"
)

func TestReplicaSettings(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantErr   bool
		wantLease time.Duration
		wantName  string
	}{
		{"defaults: crawler's lease, host name", nil, nil, false, 0, ""},
		{"flags", []string{"--crawl-lease", "90s", "--instance", "pod-a"}, nil, false, 90 * time.Second, "pod-a"},
		{"environment", nil, map[string]string{"REGISTRY_CRAWL_LEASE": "2m", "REGISTRY_INSTANCE": "registry-2"}, false, 2 * time.Minute, "registry-2"},
		// The instance is a prefix of lease owners up to a "/": another
		// "/" would let one replica's restart release another's leases.
		{"instance with a slash", []string{"--instance", "a/b"}, nil, true, 0, ""},
		{"negative lease", []string{"--crawl-lease", "-1s"}, nil, true, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := load(t, All, tt.args, tt.env)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("Load = %v; want ErrInvalid", err)
				}
				return
			}
			if err != nil || cfg.Crawl.Lease != tt.wantLease || cfg.Crawl.Instance != tt.wantName {
				t.Fatalf("Load = lease %v, instance %q, %v; want %v, %q", cfg.Crawl.Lease, cfg.Crawl.Instance, err, tt.wantLease, tt.wantName)
			}
		})
	}
}
