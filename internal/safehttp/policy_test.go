package safehttp

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	prefixes := func(s ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, p := range s {
			out = append(out, netip.MustParsePrefix(p))
		}
		return out
	}
	tests := []struct {
		name  string
		ip    string
		allow []netip.Prefix
		// wantReason is "" when the address must be dialable.
		wantReason string
	}{
		{"public v4", "93.184.215.14", nil, ""},
		{"public v6", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", nil, ""},
		{"unspecified v4", "0.0.0.0", nil, "unspecified"},
		{"this network", "0.1.2.3", nil, `"this network" (RFC 791)`},
		{"private 10/8", "10.0.0.1", nil, "private (RFC 1918)"},
		{"private 172.16/12 low", "172.16.0.1", nil, "private (RFC 1918)"},
		{"private 172.16/12 high", "172.31.255.255", nil, "private (RFC 1918)"},
		{"just outside 172.16/12", "172.32.0.1", nil, ""},
		{"private 192.168/16", "192.168.1.1", nil, "private (RFC 1918)"},
		{"CGNAT", "100.64.0.1", nil, "shared CGNAT (RFC 6598)"},
		{"just outside CGNAT", "100.128.0.1", nil, ""},
		{"loopback", "127.0.0.1", nil, "loopback"},
		{"loopback other", "127.255.0.9", nil, "loopback"},
		{"link-local v4", "169.254.1.1", nil, "link-local (RFC 3927)"},
		{"IETF assignments", "192.0.0.8", nil, "IETF protocol assignment (RFC 6890)"},
		{"TEST-NET-1", "192.0.2.2", nil, "documentation (RFC 5737)"},
		{"TEST-NET-2", "198.51.100.7", nil, "documentation (RFC 5737)"},
		{"TEST-NET-3", "203.0.113.7", nil, "documentation (RFC 5737)"},
		{"benchmarking", "198.19.255.1", nil, "benchmarking (RFC 2544)"},
		{"multicast v4", "239.1.2.3", nil, "multicast"},
		{"reserved", "250.0.0.1", nil, "reserved (RFC 1112)"},
		{"broadcast", "255.255.255.255", nil, "broadcast"},
		{"unspecified v6", "::", nil, "unspecified"},
		{"loopback v6", "::1", nil, "loopback"},
		{"IPv4-compatible", "::10.0.0.1", nil, "IPv4-compatible (deprecated, RFC 4291)"},
		{"mapped loopback", "::ffff:127.0.0.1", nil, "loopback"},
		{"mapped private", "::ffff:10.1.2.3", nil, "private (RFC 1918)"},
		{"mapped public", "::ffff:93.184.215.14", nil, ""},
		{"link-local v6", "fe80::1", nil, "link-local"},
		{"link-local v6 with zone", "fe80::1%eth0", nil, "link-local"},
		{"site-local", "fec0::1", nil, "site-local (deprecated, RFC 3879)"},
		{"unique local", "fd12:3456::1", nil, "unique local (RFC 4193)"},
		{"multicast v6", "ff02::1", nil, "multicast"},
		{"documentation v6", "2001:db8::1", nil, "documentation (RFC 3849)"},
		{"documentation v6 3fff", "3fff::1", nil, "documentation (RFC 9637)"},
		{"Teredo", "2001:0:4136:e378::1", nil, "Teredo (RFC 4380)"},
		{"discard-only", "100::1", nil, "discard-only (RFC 6666)"},
		{"NAT64 of loopback", "64:ff9b::7f00:1", nil, "NAT64 address embedding loopback"},
		{"NAT64 of private", "64:ff9b::a00:1", nil, "NAT64 address embedding private (RFC 1918)"},
		{"NAT64 of public", "64:ff9b::5db8:d70e", nil, ""},
		{"local-use NAT64", "64:ff9b:1::a00:1", nil, "local-use NAT64 (RFC 8215)"},
		{"6to4 of private", "2002:c0a8:0101::1", nil, "6to4 address embedding private (RFC 1918)"},
		{"6to4 of public", "2002:5db8:d70e::1", nil, ""},
		{"metadata v4", "169.254.169.254", nil, "cloud metadata"},
		{"metadata v6", "fd00:ec2::254", nil, "cloud metadata"},
		{"metadata Alibaba", "100.100.100.200", nil, "cloud metadata"},
		{"mapped metadata", "::ffff:169.254.169.254", nil, "cloud metadata"},
		{"NAT64 of metadata", "64:ff9b::a9fe:a9fe", nil, "NAT64 address embedding cloud metadata"},

		{"allowlisted private", "10.1.2.3", prefixes("10.0.0.0/8"), ""},
		{"allowlist is exact", "10.1.2.3", prefixes("10.0.0.0/16"), "private (RFC 1918)"},
		{"allowlisted loopback", "127.0.0.1", prefixes("127.0.0.0/8"), ""},
		{"allowlisted v4 opens mapped", "::ffff:10.0.0.1", prefixes("10.0.0.0/8"), ""},
		{"allowlisted v4 opens NAT64", "64:ff9b::a00:1", prefixes("10.0.0.0/8"), ""},
		{"allowlisted ULA", "fd12::1", prefixes("fc00::/7"), ""},
		{"link-local range keeps metadata closed", "169.254.169.254", prefixes("169.254.0.0/16"), "cloud metadata"},
		{"ULA range keeps metadata closed", "fd00:ec2::254", prefixes("fc00::/7"), "cloud metadata"},
		{"CGNAT range keeps Alibaba metadata closed", "100.100.100.200", prefixes("100.64.0.0/10"), "cloud metadata"},
		{"everything keeps metadata closed", "169.254.169.254", prefixes("0.0.0.0/0"), "cloud metadata"},
		{"single address opens metadata", "169.254.169.254", prefixes("169.254.169.254/32"), ""},
		{"link-local range keeps ECS credentials closed", "169.254.170.2", prefixes("169.254.0.0/16"), "container credentials"},
		{"link-local range keeps EKS pod identity closed", "169.254.170.23", prefixes("169.254.0.0/16"), "container credentials"},
		{"ULA range keeps EKS pod identity v6 closed", "fd00:ec2::23", prefixes("fd00::/8"), "container credentials"},
		{"single address opens ECS credentials", "169.254.170.2", prefixes("169.254.170.2/32"), ""},
		{"Azure WireServer is not public", "168.63.129.16", nil, "cloud host endpoint"},
		{"NAT64 of ECS credentials", "64:ff9b::a9fe:aa02", prefixes("169.254.0.0/16"), "NAT64 address embedding container credentials"},
		{"IPv4-translated loopback", "::ffff:0:7f00:1", nil, "IPv4-translated (RFC 2765)"},
		{"IPv4-translated public", "::ffff:0:5db8:d70e", nil, "IPv4-translated (RFC 2765)"},
		{"v4 allowlist does not open v6 loopback", "::1", prefixes("127.0.0.0/8"), "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policy{allow: tt.allow}.decide(netip.MustParseAddr(tt.ip)).Reason
			if got != tt.wantReason {
				t.Errorf("decide(%s) with allow %v = %q, want %q", tt.ip, tt.allow, got, tt.wantReason)
			}
		})
	}
}

func TestParseNetworks(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "  ", want: nil},
		{in: "10.0.0.0/8", want: []string{"10.0.0.0/8"}},
		{in: "10.0.0.0/8, 192.168.1.0/24 ,fd00::/8", want: []string{"10.0.0.0/8", "192.168.1.0/24", "fd00::/8"}},
		{in: "10.0.0.0/8,,", want: []string{"10.0.0.0/8"}},
		{in: "10.1.2.3", want: []string{"10.1.2.3/32"}},
		{in: "::1", want: []string{"::1/128"}},
		{in: "10.1.2.3/8", want: []string{"10.0.0.0/8"}},
		{in: "::ffff:10.0.0.0/104", want: []string{"10.0.0.0/8"}},
		{in: "::ffff:10.0.0.1", want: []string{"10.0.0.1/32"}},
		{in: "10.0.0.0/33", wantErr: true},
		{in: "10.0.0.0/8,bogus", wantErr: true},
		{in: "example.com", wantErr: true},
		{in: "fe80::1%eth0", wantErr: true},
		{in: "10.0.0.0/-1", wantErr: true},
		{in: "::ffff:0:0/80", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseNetworks(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidNetwork) {
					t.Fatalf("ParseNetworks(%q) error = %v, want ErrInvalidNetwork", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseNetworks(%q): %v", tt.in, err)
			}
			var gotS []string
			for _, p := range got {
				gotS = append(gotS, p.String())
			}
			if !slices.Equal(gotS, tt.want) {
				t.Errorf("ParseNetworks(%q) = %v, want %v", tt.in, gotS, tt.want)
			}
		})
	}
}

func TestParseNetworksErrorNamesEntry(t *testing.T) {
	_, err := ParseNetworks("10.0.0.0/8, 300.1.1.1/8")
	if err == nil {
		t.Fatal("no error")
	}
	const want = `safehttp: invalid network "300.1.1.1/8" in allowlist`
	if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("error %q does not start with %q", got, want)
	}
}
