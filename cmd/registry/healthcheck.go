package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/a2aregistry/registry/internal/config"
)

// runHealthcheck asks the registry serving on the listen address whether
// it is ready (GET /readyz) and exits 0 when it is: the image has no curl,
// so its HEALTHCHECK runs the binary itself. It reads the same --listen /
// REGISTRY_LISTEN as serve, and asks a wildcard address's loopback.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	fs := flag.NewFlagSet("registry healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := getenv("REGISTRY_LISTEN")
	if listen == "" {
		listen = config.DefaultListen
	}
	fs.StringVar(&listen, "listen", listen, "the serve command's listen address host:port (env REGISTRY_LISTEN)")
	path := fs.String("path", "/readyz", "what to ask: /readyz (ready for traffic) or /healthz (alive)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	target, err := healthcheckURL(listen, *path)
	if err != nil {
		fmt.Fprintf(stderr, "registry healthcheck: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		fmt.Fprintf(stderr, "registry healthcheck: %v\n", err)
		return exitUsage
	}
	// The server's own loopback: no proxy from the environment.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "registry healthcheck: %v\n", err)
		return exitFail
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(stdout, "%s %s\n", resp.Status, body)
	if resp.StatusCode != http.StatusOK {
		return exitFail
	}
	return exitOK
}

// healthcheckURL turns a listen address into the URL of path on it; a
// wildcard host (0.0.0.0, ::, empty) is reached on its loopback.
func healthcheckURL(listen, path string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", listen, err)
	}
	if ip, err := netip.ParseAddr(host); host == "" || err == nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if err == nil && ip.Is6() {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}
