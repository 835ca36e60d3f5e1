package verify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// ProbeStatus summarizes one probe.
type ProbeStatus string

const (
	// ProbeConfirmed: the endpoint answered in the declared binding and
	// protocol version.
	ProbeConfirmed ProbeStatus = "confirmed"
	// ProbeVersionMismatch: the binding is right, the version is not
	// (or could not be confirmed).
	ProbeVersionMismatch ProbeStatus = "version_unconfirmed"
	// ProbeBindingMismatch: something answered, but not in the declared
	// binding: the declaration is false.
	ProbeBindingMismatch ProbeStatus = "binding_mismatch"
	// ProbeUnreachable: no answer (refused address, DNS, connect, TLS,
	// timeout).
	ProbeUnreachable ProbeStatus = "unreachable"
	// ProbeSkipped: the binding is an extension value no probe knows.
	ProbeSkipped ProbeStatus = "skipped"
	// ProbeTLSMismatch: the declaration implies TLS (https://, or a bare
	// gRPC host:port) and the server speaks plain text; not a wrong
	// binding, and not tried in plain text outside the allowlisted
	// networks.
	ProbeTLSMismatch ProbeStatus = "tls_mismatch"
)

// Probe causes: why a probe did not confirm its declaration, for tests and
// pages to switch on (Probe.Problem is for people). The transport causes
// are safehttp's.
const (
	CauseBlockedAddress  = safehttp.CauseBlockedAddress
	CauseReservedName    = safehttp.CauseReservedName
	CauseSelf            = safehttp.CauseSelf
	CauseDNS             = safehttp.CauseDNS
	CauseConnect         = safehttp.CauseConnect
	CauseTLS             = safehttp.CauseTLS
	CauseTimeout         = safehttp.CauseTimeout
	CauseTooLarge        = safehttp.CauseTooLarge
	CauseInvalidURL      = safehttp.CauseInvalidURL
	CauseTLSMismatch     = "tls_mismatch"
	CauseWrongBinding    = "wrong_binding"
	CauseVersionMismatch = "version_unconfirmed"
	CauseNoProbe         = "no_probe"
)

// Probe is the live check of one declared interface.
type Probe struct {
	URL             string `json:"url"`
	Binding         string `json:"binding"`
	ProtocolVersion string `json:"protocol_version"`
	// Path is the JSON path of the declaration.
	Path             string      `json:"path"`
	Status           ProbeStatus `json:"status"`
	Reachable        bool        `json:"reachable"`
	BindingConfirmed bool        `json:"binding_confirmed"`
	VersionConfirmed bool        `json:"version_confirmed"`
	// TLS is true when the exchange ran over verified TLS.
	TLS        bool   `json:"tls"`
	TLSVersion string `json:"tls_version,omitempty"`
	LatencyMS  int64  `json:"latency_ms"`
	// Evidence is what the endpoint said ("JSON-RPC error -32001", "gRPC
	// NotFound"); Problem what was wrong.
	Evidence string `json:"evidence,omitempty"`
	Problem  string `json:"problem,omitempty"`
	// Cause is the machine-readable reason behind Problem (Cause*); empty
	// when the probe confirmed the declaration.
	Cause string `json:"cause,omitempty"`
}

// ProbeInterfaces probes every declared interface with a read of a
// random, nonexistent task: GetTask has no side effects, and the error it
// must produce shows the binding and version the endpoint really speaks.
func (v *Verifier) ProbeInterfaces(ctx context.Context, c *card.Card) []Probe {
	out := make([]Probe, 0, len(c.Interfaces))
	for _, in := range c.Interfaces {
		out = append(out, v.ProbeInterface(ctx, in))
	}
	return out
}

// ProbeInterface probes one interface.
func (v *Verifier) ProbeInterface(ctx context.Context, in card.Interface) Probe {
	p := Probe{URL: in.URL, Binding: in.Binding, ProtocolVersion: in.ProtocolVersion, Path: in.Path}
	if v.opts.Client == nil {
		p.Status, p.Problem, p.Cause = ProbeSkipped, "no network client configured", CauseNoProbe
		return p
	}
	if in.ProtocolVersion == card.VersionUnknown {
		// The wire format differs between 0.3 and 1.0; probing one would
		// report a guess as the agent's fault or merit.
		p.Status, p.Problem = ProbeSkipped, "the card declares no protocol version for this interface, so there is no wire format to probe"
		return p
	}
	ctx, cancel := context.WithTimeout(ctx, v.opts.ProbeTimeout)
	defer cancel()
	v1 := isV1(in.ProtocolVersion)
	start := time.Now()
	switch in.Binding {
	case card.BindingJSONRPC:
		v.probeJSONRPC(ctx, &p, v1)
	case card.BindingHTTPJSON:
		v.probeREST(ctx, &p, v1, in.Tenant)
	case card.BindingGRPC:
		v.probeGRPC(ctx, &p, v1, in.Tenant)
	default:
		p.Status, p.Problem, p.Cause = ProbeSkipped, fmt.Sprintf("binding %q has no probe", in.Binding), CauseNoProbe
		return p
	}
	p.LatencyMS = time.Since(start).Milliseconds()
	switch {
	case p.Cause == CauseTLSMismatch:
		p.Status = ProbeTLSMismatch
	case !p.Reachable:
		p.Status = ProbeUnreachable
		if p.Cause == "" {
			p.Cause = CauseConnect
		}
	case !p.BindingConfirmed:
		p.Status = ProbeBindingMismatch
		if p.Cause == "" {
			p.Cause = CauseWrongBinding
		}
	case !p.VersionConfirmed:
		p.Status = ProbeVersionMismatch
		p.Cause = CauseVersionMismatch
	default:
		p.Status = ProbeConfirmed
	}
	return p
}

// hostOf is the host of a declared URL as written, for messages that must
// not show what it resolves to.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	if hostport, _, _ := strings.Cut(raw, "/"); hostport != "" && !strings.Contains(raw, "://") {
		return hostport
	}
	return "the declared host"
}

// transportFailure records a failed exchange: its cause, and a message
// that names the declared host, never the address it resolved to.
func transportFailure(p *Probe, err error) {
	p.Cause = safehttp.Cause(err)
	if p.Cause == CauseTLS && safehttp.PlaintextPeer(err) {
		p.Cause = CauseTLSMismatch
	}
	p.Problem = safehttp.Describe(hostOf(p.URL), err)
}

// isV1 tells a v1.x declaration from a v0.x one.
func isV1(version string) bool {
	major, _, _ := strings.Cut(version, ".")
	return major != "0"
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "registry-probe-" + hex.EncodeToString(b[:])
}

// probeClient is the safe client without redirects: a redirect is an
// answer to report, not to follow (the declared URL is what clients use).
func (v *Verifier) probeClient() *http.Client {
	hc := v.opts.Client.HTTPClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return hc
}

func (v *Verifier) send(p *Probe, req *http.Request) (*http.Response, []byte, bool) {
	// A connection that was made but spoke no HTTP (a gRPC-only server
	// answering with HTTP/2 frames) is reachable, and a false declaration.
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				connected.Store(true)
			}
		},
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	resp, err := v.probeClient().Do(req)
	if err != nil {
		p.Reachable = connected.Load()
		transportFailure(p, err)
		if p.Reachable && p.Cause == CauseConnect {
			p.Cause = CauseWrongBinding
			p.Problem = fmt.Sprintf("%s accepted the connection but did not answer in HTTP", hostOf(p.URL))
		}
		return nil, nil, false
	}
	defer resp.Body.Close()
	p.Reachable = true
	if resp.TLS != nil {
		p.TLS = true
		p.TLSVersion = tls.VersionName(resp.TLS.Version)
	}
	body, err := safehttp.ReadBody(resp, maxProbeResponseBytes)
	if err != nil {
		transportFailure(p, err)
		p.Problem = fmt.Sprintf("HTTP %d, then: %s", resp.StatusCode, p.Problem)
		return resp, nil, false
	}
	return resp, body, true
}

// JSON-RPC error codes (JSON-RPC 2.0 §5.1; A2A §5.4 / v1.0 §9.5).
const (
	rpcMethodNotFound      = -32601
	rpcTaskNotFound        = -32001
	rpcVersionNotSupported = -32009
)

func (v *Verifier) probeJSONRPC(ctx context.Context, p *Probe, v1 bool) {
	method, taskID := "tasks/get", randomID()
	if v1 {
		method = "GetTask"
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": taskID, "method": method, "params": map[string]any{"id": taskID}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
	if err != nil {
		p.Problem, p.Cause = "the declared URL is not a valid URL", CauseInvalidURL
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if v1 {
		req.Header.Set("A2A-Version", "1.0")
	}
	resp, raw, ok := v.send(p, req)
	if !ok {
		return
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.JSONRPC != "2.0" {
		p.Problem = fmt.Sprintf("HTTP %d with a body that is not a JSON-RPC 2.0 response", resp.StatusCode)
		return
	}
	switch {
	case msg.Error != nil && msg.Error.Code != nil:
		p.BindingConfirmed = true
		code := *msg.Error.Code
		p.Evidence = fmt.Sprintf("JSON-RPC error %d: %s", code, truncate(msg.Error.Message, 120))
		switch code {
		case rpcTaskNotFound:
			p.VersionConfirmed = true
		case rpcMethodNotFound:
			p.Problem = fmt.Sprintf("the server does not know %s, so it does not speak protocol %s", method, p.ProtocolVersion)
		case rpcVersionNotSupported:
			p.Problem = fmt.Sprintf("the server refuses protocol %s (VersionNotSupported)", p.ProtocolVersion)
		default:
			p.Problem = "the error does not show whether the declared version is served"
		}
	case len(msg.Result) > 0 && string(msg.Result) != "null":
		p.BindingConfirmed = true
		p.Evidence = "JSON-RPC result"
		p.Problem = "a task with a random id was found, which no honest server does"
	default:
		p.Problem = "a JSON-RPC response with neither result nor a well-formed error"
	}
}

func (v *Verifier) probeREST(ctx context.Context, p *Probe, v1 bool, tenant string) {
	base := strings.TrimSuffix(p.URL, "/")
	path := "/v1/tasks/"
	if v1 {
		path = "/tasks/"
		if tenant != "" {
			path = "/" + url.PathEscape(tenant) + path
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+randomID(), nil)
	if err != nil {
		p.Problem, p.Cause = "the declared URL is not a valid URL", CauseInvalidURL
		return
	}
	req.Header.Set("Accept", "application/json")
	if v1 {
		req.Header.Set("A2A-Version", "1.0")
	}
	resp, raw, ok := v.send(p, req)
	if !ok {
		return
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	var obj map[string]any
	isJSON := strings.Contains(ct, "json") && json.Unmarshal(raw, &obj) == nil
	p.Evidence = fmt.Sprintf("HTTP %d %s", resp.StatusCode, ct)
	switch {
	case !isJSON:
		p.Problem = fmt.Sprintf("GET %s answered HTTP %d without a JSON body: no HTTP+JSON route for tasks", path+"{id}", resp.StatusCode)
	case resp.StatusCode == http.StatusNotFound:
		p.BindingConfirmed, p.VersionConfirmed = true, true
	case resp.StatusCode >= 400:
		p.BindingConfirmed = true
		p.Problem = fmt.Sprintf("HTTP %d: a JSON error, but not task-not-found", resp.StatusCode)
	default:
		p.BindingConfirmed = true
		p.Problem = fmt.Sprintf("HTTP %d for a random task id, which no honest server answers", resp.StatusCode)
	}
}

// rawCodec sends pre-encoded protobuf bytes, so the probe needs neither the
// v0.3 nor the v1.0 generated types: GetTaskRequest is one string field
// (v0.3 a2a.v1: name = 1 "tasks/{id}"; v1.0 lf.a2a.v1: id = 2).
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: %T", v)
	}
	return b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: %T", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

func (v *Verifier) probeGRPC(ctx context.Context, p *Probe, v1 bool, tenant string) {
	target, useTLS, host, implicitTLS, err := grpcTarget(p.URL)
	if err != nil {
		p.Problem, p.Cause = err.Error(), CauseInvalidURL
		return
	}
	id := randomID()
	var req []byte
	method := "/a2a.v1.A2AService/GetTask"
	if v1 {
		method = "/lf.a2a.v1.A2AService/GetTask"
		if tenant != "" {
			req = protowire.AppendTag(req, 1, protowire.BytesType)
			req = protowire.AppendString(req, tenant)
		}
		req = protowire.AppendTag(req, 2, protowire.BytesType)
		req = protowire.AppendString(req, id)
	} else {
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendString(req, "tasks/"+id)
	}
	call := grpcCall{target: target, host: host, method: method, req: req, v1: v1}
	res := v.invokeGRPC(ctx, call, useTLS)
	if useTLS && res.handshakeErr != nil && v.speaksPlaintextHTTP2(ctx, target) {
		// A bare host:port is read as TLS, but the a2a-go samples (and
		// many private deployments) serve gRPC in plain text. That is a
		// fact about TLS, not a false binding. Plain text is only tried
		// where the operator opened the network: on the public Internet a
		// plaintext agent is reported, not used.
		if !implicitTLS || !v.onOpenedNetwork(res.remote) {
			p.Reachable = true
			p.Cause = CauseTLSMismatch
			p.Evidence = "plaintext HTTP/2"
			p.Problem = fmt.Sprintf("TLS handshake with %s failed: the server speaks plain text", hostOf(p.URL))
			return
		}
		res = v.invokeGRPC(ctx, call, false)
		useTLS = false
		defer func() {
			if p.Problem == "" {
				p.Problem = "served without TLS: the declaration names no scheme and the server speaks plain text"
			}
		}()
	}
	err = res.err
	p.Reachable = res.dialed
	p.TLS = useTLS && p.Reachable
	st, _ := status.FromError(err)
	p.Evidence = "gRPC " + st.Code().String()
	switch {
	case err == nil:
		p.BindingConfirmed = true
		p.Problem = "a task with a random id was found, which no honest server does"
	case st.Code() == codes.NotFound:
		p.BindingConfirmed, p.VersionConfirmed = true, true
	case st.Code() == codes.Unimplemented && strings.Contains(st.Message(), "unknown service"):
		p.BindingConfirmed = true
		p.Problem = fmt.Sprintf("the gRPC server does not offer %s", strings.Split(method, "/")[1])
	case res.dialErr != nil:
		// The dial itself failed (refused address, DNS, connect): the
		// safe client's error, not gRPC's text, which embeds addresses.
		p.Reachable = false
		transportFailure(p, res.dialErr)
	case res.handshakeErr != nil:
		transportFailure(p, res.handshakeErr)
	case st.Code() == codes.DeadlineExceeded:
		p.Cause = CauseTimeout
		p.Problem = fmt.Sprintf("%s did not answer within the time limit", hostOf(p.URL))
	case st.Code() == codes.Unavailable || st.Code() == codes.Internal || st.Code() == codes.Unknown:
		// Transport-level failures after the connection: an HTTP/1
		// server, a non-gRPC HTTP/2 server.
		p.Cause = CauseWrongBinding
		p.Problem = fmt.Sprintf("%s did not answer as a gRPC server (gRPC %s)", hostOf(p.URL), st.Code())
	default:
		p.BindingConfirmed = true
		p.Problem = fmt.Sprintf("gRPC %s: %s", st.Code(), truncate(st.Message(), 120))
	}
}

type grpcCall struct {
	target, host, method string
	req                  []byte
	v1                   bool
}

type grpcResult struct {
	err          error
	dialed       bool
	dialErr      error
	handshakeErr error
	remote       net.Addr
}

// invokeGRPC makes one unary call over the safe client's dialer and
// records what happened below gRPC's status (whose messages embed the
// resolved address).
func (v *Verifier) invokeGRPC(ctx context.Context, call grpcCall, useTLS bool) grpcResult {
	var (
		mu  sync.Mutex
		res grpcResult
	)
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		conn, err := v.opts.Client.DialContext(ctx, "tcp", addr)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.dialErr = err
			return nil, err
		}
		res.dialed, res.remote, res.dialErr = true, conn.RemoteAddr(), nil
		return conn, nil
	}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if useTLS {
		creds = &handshakeRecorder{
			TransportCredentials: credentials.NewTLS(&tls.Config{ServerName: call.host,
				RootCAs: v.opts.Client.Config().RootCAs, MinVersion: tls.VersionTLS12}),
			record: func(err error) {
				mu.Lock()
				res.handshakeErr = err
				mu.Unlock()
			},
		}
	}
	conn, err := grpc.NewClient("passthrough:///"+call.target,
		grpc.WithContextDialer(dialer),
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent(v.opts.Client.Config().UserAgent))
	if err != nil {
		return grpcResult{err: err, dialErr: err}
	}
	defer conn.Close()
	var resp []byte
	err = conn.Invoke(appendVersion(ctx, call.v1), call.method, call.req, &resp,
		grpc.ForceCodec(rawCodec{}), grpc.WaitForReady(false))
	mu.Lock()
	defer mu.Unlock()
	res.err = err
	return res
}

// handshakeRecorder keeps the TLS handshake's own error, which gRPC only
// passes on as text.
type handshakeRecorder struct {
	credentials.TransportCredentials
	record func(error)
}

func (h *handshakeRecorder) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	c, info, err := h.TransportCredentials.ClientHandshake(ctx, authority, conn)
	if err != nil {
		h.record(err)
	}
	return c, info, err
}

func (h *handshakeRecorder) Clone() credentials.TransportCredentials {
	return &handshakeRecorder{TransportCredentials: h.TransportCredentials.Clone(), record: h.record}
}

// http2Preface is the client connection preface (RFC 9113 §3.4) followed
// by an empty SETTINGS frame.
var http2Preface = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 0x4, 0, 0, 0, 0, 0)

// speaksPlaintextHTTP2 tells whether target answers an HTTP/2 preface in
// plain text with a SETTINGS frame (RFC 9113 §3.4: the server's preface).
// It sends no request, only the preface, so it is harmless on any host.
func (v *Verifier) speaksPlaintextHTTP2(ctx context.Context, target string) bool {
	conn, err := v.opts.Client.DialContext(ctx, "tcp", target)
	if err != nil {
		return false
	}
	defer conn.Close()
	deadline := time.Now().Add(2 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	if _, err := conn.Write(http2Preface); err != nil {
		return false
	}
	var hdr [9]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return false
	}
	return hdr[3] == 0x4 // frame type SETTINGS
}

// onOpenedNetwork tells whether the connected address addr lies on a
// network the operator opened with --allow-networks; the safe client
// decides (safehttp.Client.Decide), as it does for the proxy.
func (v *Verifier) onOpenedNetwork(addr net.Addr) bool {
	if addr == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return false
	}
	return v.opts.Client.Decide(ap.Addr()).Opened
}

// grpcTarget turns a declared gRPC URL into host:port. http:// means
// plaintext (h2c); https://, grpcs:// and bare host:port mean TLS, the
// last only by default (implicitTLS).
func grpcTarget(raw string) (target string, useTLS bool, host string, implicitTLS bool, err error) {
	useTLS, implicitTLS = true, true
	rest := raw
	if scheme, r, ok := strings.Cut(raw, "://"); ok {
		rest, implicitTLS = r, false
		switch strings.ToLower(scheme) {
		case "http", "grpc":
			useTLS = false
		case "https", "grpcs":
		default:
			return "", false, "", false, fmt.Errorf("gRPC URL %q: unknown scheme %q", raw, scheme)
		}
	}
	hostport, _, _ := strings.Cut(rest, "/")
	h, port, err := net.SplitHostPort(hostport)
	if err != nil {
		h, port = strings.Trim(hostport, "[]"), "443"
		if !useTLS {
			port = "80"
		}
	}
	if h == "" {
		return "", false, "", false, fmt.Errorf("gRPC URL %q has no host", raw)
	}
	return net.JoinHostPort(h, port), useTLS, h, implicitTLS, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// appendVersion sends the A2A-Version service parameter as gRPC metadata
// for v1.0 calls, as a2a-go's clients do.
func appendVersion(ctx context.Context, v1 bool) context.Context {
	if !v1 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0")
}
