package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	grpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// connection is one SDK client bound to one endpoint, with what its dials
// saw.
type connection struct {
	client *a2aclient.Client
	// dialErr is the last failed dial of a gRPC connection (HTTP dial
	// failures come back wrapped in the call's error).
	mu      sync.Mutex
	dialErr error
	// sniff holds the start of the answers of a v1.0 HTTP binding, to
	// tell one given in the v0.3 shape (nil otherwise).
	sniff *sniffer
}

func (c *connection) recordDial(err error) {
	c.mu.Lock()
	c.dialErr = err
	c.mu.Unlock()
}

func (c *connection) lastDialErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dialErr
}

// connect builds the SDK client for ep. The SDK picks the transport by
// (binding, version): the v1.0 transports for 1.x, a2acompat/a2av0's for
// 0.2 and 0.3. The SDK sets A2A-Version from the version of the transport
// it picked; the tenant travels in each request (v1.0 §3.2 tenant).
func (p *Proxy) connect(ctx context.Context, ep Endpoint, au *auth, extensions []string) (*connection, error) {
	conn := &connection{}
	v1, _ := wireVersion(ep.Speaks)
	hc := p.client.HTTPClient()
	// Streams outlive any fixed exchange limit; the run's context bounds
	// every call.
	hc.Timeout = 0
	if au != nil && len(au.query) > 0 {
		hc.Transport = &roundTripper{base: hc.Transport, query: au.query}
	}
	if ep.Binding != card.BindingGRPC {
		hc.Transport = &streamGuard{base: hc.Transport}
	}
	if v1 && ep.Binding != card.BindingGRPC {
		conn.sniff = &sniffer{}
		hc.Transport = &sniffTransport{base: hc.Transport, s: conn.sniff}
	}
	var opt a2aclient.FactoryOption
	version := a2a.Version
	if !v1 {
		version = a2av0.Version
	}
	switch ep.Binding {
	case card.BindingJSONRPC:
		if v1 {
			opt = a2aclient.WithJSONRPCTransport(hc)
		} else {
			opt = a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc})
		}
	case card.BindingHTTPJSON:
		if v1 {
			opt = a2aclient.WithRESTTransport(hc)
		} else {
			opt = a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: hc})
		}
	case card.BindingGRPC:
		factory := a2aclient.TransportFactoryFn(func(ctx context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
			cc, err := p.dialGRPC(ctx, iface.URL, conn)
			if err != nil {
				return nil, err
			}
			if v1 {
				return grpcv1.NewGRPCTransport(cc), nil
			}
			return grpcv0.NewGRPCTransport(cc), nil
		})
		opt = a2aclient.WithCompatTransport(version, a2a.TransportProtocolGRPC, factory)
	default:
		return nil, fmt.Errorf("%w: binding %s", ErrNoUsableInterface, ep.Binding)
	}
	opts := []a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled(), opt}
	headers := map[string][]string{}
	if au != nil {
		for k, v := range au.headers {
			headers[k] = v
		}
	}
	if len(extensions) > 0 {
		headers[a2a.SvcParamExtensions] = extensions
	}
	if len(headers) > 0 {
		opts = append(opts, a2aclient.WithCallInterceptors(&headerInterceptor{headers: headers}))
	}
	iface := &a2a.AgentInterface{
		URL:             ep.URL,
		ProtocolBinding: a2a.TransportProtocol(ep.Binding),
		ProtocolVersion: version,
		Tenant:          ep.Tenant,
	}
	c, err := a2aclient.NewFactory(opts...).CreateFromEndpoints(ctx, []*a2a.AgentInterface{iface})
	if err != nil {
		return nil, fmt.Errorf("creating the A2A client for %s: %w", ep.URL, err)
	}
	conn.client = c
	return conn, nil
}

// headerInterceptor adds credential headers as service parameters, which
// the HTTP bindings send as headers and gRPC as metadata.
type headerInterceptor struct {
	a2aclient.PassthroughInterceptor
	headers map[string][]string
}

func (h *headerInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	for k, v := range h.headers {
		req.ServiceParams[k] = append([]string(nil), v...)
	}
	return ctx, nil, nil
}

// dialGRPC opens a gRPC client connection whose every dial goes through the
// safe client (address policy after DNS resolution). TLS is used unless
// the declared URL says http:// or grpc://, or it is a bare host:port on a
// network the operator opened (where the a2a-go samples and many private
// deployments serve gRPC in plain text); a bare host:port on the public
// Internet gets TLS.
func (p *Proxy) dialGRPC(ctx context.Context, raw string, conn *connection) (*grpc.ClientConn, error) {
	target, mode, host, err := grpcTarget(raw)
	if err != nil {
		return nil, err
	}
	plaintext, err := p.plaintext(ctx, mode, host)
	if err != nil {
		return nil, err
	}
	cfg := p.client.Config()
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := p.client.DialContext(ctx, "tcp", addr)
		conn.recordDial(err)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if !plaintext {
		creds = credentials.NewTLS(&tls.Config{ServerName: host, RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12})
	}
	return grpc.NewClient("passthrough:///"+target,
		grpc.WithContextDialer(dialer),
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent(cfg.UserAgent))
}

// plaintext decides whether to speak gRPC without TLS to host. For a bare
// host:port the safe client resolves host under the run's ctx (so the
// run's deadline bounds the lookup) and says whether every address lies
// on a network the operator opened: its one allowed-network decision, the
// verifier's too. A failed lookup fails the interface; the dial would
// fail the same way.
func (p *Proxy) plaintext(ctx context.Context, mode plaintextMode, host string) (bool, error) {
	switch mode {
	case plaintextYes:
		return true, nil
	case plaintextNo:
		return false, nil
	}
	opened, err := p.client.OnOpenedNetwork(ctx, host)
	if err != nil {
		return false, fmt.Errorf("gRPC interface on %s: %w", host, err)
	}
	return opened, nil
}

type plaintextMode int

const (
	plaintextNo plaintextMode = iota
	plaintextYes
	plaintextIfAllowed
)

// grpcTarget turns a declared gRPC URL into host:port and tells whether to
// speak plain text: http:// and grpc:// say so, https:// and grpcs:// say
// TLS, a bare host:port says nothing.
func grpcTarget(raw string) (target string, mode plaintextMode, host string, err error) {
	mode = plaintextIfAllowed
	rest := raw
	if scheme, r, ok := strings.Cut(raw, "://"); ok {
		rest = r
		switch strings.ToLower(scheme) {
		case "http", "grpc":
			mode = plaintextYes
		case "https", "grpcs":
			mode = plaintextNo
		default:
			return "", 0, "", fmt.Errorf("%w: gRPC URL %q has unknown scheme %q", ErrNoUsableInterface, raw, scheme)
		}
	}
	hostport, _, _ := strings.Cut(rest, "/")
	h, port, err := net.SplitHostPort(hostport)
	if err != nil {
		h, port = strings.Trim(hostport, "[]"), "443"
		if mode == plaintextYes {
			port = "80"
		}
	}
	if h == "" {
		return "", 0, "", fmt.Errorf("%w: gRPC URL %q has no host", ErrNoUsableInterface, raw)
	}
	return net.JoinHostPort(h, port), mode, h, nil
}

// dialCause is the error a failed dial of conn recorded, else err.
func dialCause(err error, conn *connection) error {
	if conn != nil {
		if d := conn.lastDialErr(); d != nil {
			return d
		}
	}
	return err
}

// connectFailed tells a failure to reach the endpoint (nothing was
// exchanged with the agent: DNS, refused address, connection refused, TLS
// handshake) from an answer. Only the first kind moves on to the next
// interface.
func connectFailed(err error, conn *connection) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, safehttp.ErrBlockedAddress) || errors.Is(err, safehttp.ErrReservedName) || errors.Is(err, safehttp.ErrSelf) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var rh tls.RecordHeaderError
	var cv *tls.CertificateVerificationError
	if errors.As(err, &rh) || errors.As(err, &cv) {
		return true
	}
	// gRPC reports a failed dial as status Unavailable with text only; the
	// dialer recorded the cause.
	return conn != nil && conn.lastDialErr() != nil
}
