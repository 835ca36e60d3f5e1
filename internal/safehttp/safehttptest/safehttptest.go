// Package safehttptest gives tests of safehttp and its callers a DNS
// resolver they control: it answers from a table, in process, and records
// every name it is asked for, so a test can prove which names were looked
// up and that none of them left the machine.
package safehttptest

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// Resolver is an in-process DNS server behind a *net.Resolver (Net). It
// answers A and AAAA questions from its table and NXDOMAIN for names it
// does not know.
type Resolver struct {
	t     testing.TB
	hosts map[string][]netip.Addr
	hang  bool

	mu    sync.Mutex
	asked []string
}

// NewResolver answers for hosts (name → addresses). Asked for a name that
// no resolver should ever see (a reserved or localhost name, RFC 2606
// and RFC 6761), it fails t.
func NewResolver(t testing.TB, hosts map[string][]string) *Resolver {
	r := &Resolver{t: t, hosts: map[string][]netip.Addr{}}
	for name, addrs := range hosts {
		for _, a := range addrs {
			r.hosts[canonical(name)] = append(r.hosts[canonical(name)], netip.MustParseAddr(a))
		}
	}
	return r
}

// NewHangingResolver never answers: a lookup ends only when its context
// does (or after the Go resolver's own timeout of several seconds, which
// a test can tell apart).
func NewHangingResolver(t testing.TB) *Resolver {
	return &Resolver{t: t, hang: true}
}

// Net is the resolver to put in safehttp.Config.Resolver. PreferGo makes
// Go's own resolver send its queries through Dial, to this server.
func (r *Resolver) Net() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: r.dial}
}

// Asked returns every name asked for so far, in order, without the
// trailing dot.
func (r *Resolver) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// neverAsked are the domains a resolver must never see a question for:
// safehttp answers them itself. The list is written out here, not taken
// from safehttp, so that the test is an independent oracle.
var neverAsked = []string{"example", "test", "invalid", "localhost", "example.com", "example.net", "example.org"}

// Reserved tells whether name lies in one of the domains no resolver may
// be asked about.
func Reserved(name string) bool {
	name = canonical(name)
	for _, d := range neverAsked {
		if name == d || strings.HasSuffix(name, "."+d) {
			return true
		}
	}
	return false
}

func canonical(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

func (r *Resolver) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	go r.serve(server)
	return client, nil
}

// serve answers queries in DNS's stream framing (RFC 1035 §4.2.2: a
// two-byte length before each message), which Go's resolver uses on any
// connection that is not a net.PacketConn.
func (r *Resolver) serve(conn net.Conn) {
	defer conn.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(conn, n[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(conn, msg); err != nil {
			return
		}
		resp, ok := r.answer(msg)
		if !ok {
			// Hanging, or a query we cannot read: wait for the client to
			// give up.
			_, _ = io.Copy(io.Discard, conn)
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := conn.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

func (r *Resolver) answer(msg []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		r.t.Errorf("safehttptest: unreadable DNS query: %v", err)
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		r.t.Errorf("safehttptest: DNS query without a question: %v", err)
		return nil, false
	}
	name := canonical(q.Name.String())
	r.mu.Lock()
	r.asked = append(r.asked, name)
	r.mu.Unlock()
	if Reserved(name) {
		r.t.Errorf("safehttptest: the resolver was asked for %s (%s), a name that must never be looked up", name, q.Type)
	}
	if r.hang {
		return nil, false
	}
	addrs, known := r.hosts[name]
	rcode := dnsmessage.RCodeSuccess
	if !known {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{
		ID: h.ID, Response: true, Authoritative: true, RecursionAvailable: true, RCode: rcode,
	})
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	for _, a := range addrs {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			_ = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		case q.Type == dnsmessage.TypeAAAA && a.Is6():
			_ = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
	}
	out, err := b.Finish()
	if err != nil {
		r.t.Errorf("safehttptest: building the DNS answer: %v", err)
		return nil, false
	}
	return out, true
}
