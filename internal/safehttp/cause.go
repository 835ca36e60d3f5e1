package safehttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
)

// Causes of a failed exchange, as Cause reports them. They are stored and
// shown to users (the crawler's failure classes and the verifier's probe
// causes use the same strings), so they are stable.
const (
	CauseBlockedAddress = "blocked_address"
	// CauseReservedName: the host is in a domain reserved for
	// documentation, testing or as invalid (RFC 2606, RFC 6761), refused
	// before any lookup.
	CauseReservedName = "reserved_name"
	// CauseSelf: the request would reach the registry itself (its listen
	// address or public URL, by name or by address), which no allowlist
	// opens; or one of its own exempt URLs was asked for with a
	// credential (see Self).
	CauseSelf       = "self"
	CauseDNS        = "dns"
	CauseConnect    = "connect"
	CauseTLS        = "tls"
	CauseTimeout    = "timeout"
	CauseCanceled   = "canceled"
	CauseTooLarge   = "too_large"
	CauseRedirect   = "redirect"
	CauseInvalidURL = "invalid_url"
)

// Cause classifies the error of a request sent through a Client (or of
// reading its body); "" for nil. The order matters: a *net.DNSError may
// also be a timeout, and a TLS handshake timeout is a timeout rather than a
// certificate problem.
func Cause(err error) string {
	var (
		dnsErr      *net.DNSError
		addrErr     *net.AddrError
		certErr     *tls.CertificateVerificationError
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		invalidCert x509.CertificateInvalidError
		recordErr   tls.RecordHeaderError
		alertErr    tls.AlertError
		echErr      *tls.ECHRejectionError
		opErr       *net.OpError
		netErr      net.Error
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrSelf):
		return CauseSelf
	case errors.Is(err, ErrBlockedAddress):
		return CauseBlockedAddress
	case errors.Is(err, ErrReservedName):
		return CauseReservedName
	case errors.Is(err, ErrTooManyRedirects), errors.Is(err, ErrRedirectRefused):
		// Before ErrUnsupportedScheme: a redirect to file: is the server's
		// doing, not a fault of the URL the caller gave.
		return CauseRedirect
	case errors.Is(err, ErrUnsupportedScheme):
		return CauseInvalidURL
	case errors.Is(err, ErrBodyTooLarge), errors.Is(err, ErrHeadersTooLarge):
		return CauseTooLarge
	case errors.Is(err, context.Canceled):
		return CauseCanceled
	case errors.As(err, &dnsErr), errors.As(err, &addrErr):
		// *net.AddrError: the name resolved to no usable address ("no
		// suitable address found"), e.g. a .onion name Go never resolves.
		return CauseDNS
	case errors.Is(err, http.ErrSchemeMismatch):
		// https:// to a server speaking plain HTTP.
		return CauseTLS
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr),
		errors.As(err, &invalidCert), errors.As(err, &recordErr), errors.As(err, &alertErr),
		errors.As(err, &echErr):
		return CauseTLS
	case errors.As(err, &opErr) && opErr.Op == "remote error":
		// crypto/tls reports a TLS alert from the peer this way.
		return CauseTLS
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return CauseTimeout
	}
	// Refused, reset, unreachable, or the peer broke the exchange before a
	// complete response.
	return CauseConnect
}

// PlaintextPeer tells whether a TLS handshake failed because the peer
// answered in plain text (an HTTP/1 or h2c server on the port).
func PlaintextPeer(err error) bool {
	var recordErr tls.RecordHeaderError
	return errors.Is(err, http.ErrSchemeMismatch) || errors.As(err, &recordErr)
}

// Describe says what went wrong with a request to host in words that are
// safe to store and show to anyone who can read the catalog: the cause and
// the host name the caller asked for, never a resolved address, a socket
// address, the resolver's address or a Go type (err.Error() carries all
// of those, so it belongs in logs only). host is the name from the URL
// the user gave.
func Describe(host string, err error) string {
	switch Cause(err) {
	case "":
		return ""
	case CauseBlockedAddress:
		var be *BlockedError
		if errors.As(err, &be) {
			return fmt.Sprintf("refusing to connect to %s: it leads to a %s address", host, be.Reason)
		}
		return fmt.Sprintf("refusing to connect to %s: it leads to a non-public address", host)
	case CauseSelf:
		var se *SelfError
		if errors.As(err, &se) && se.Credential {
			return fmt.Sprintf("refusing to send credentials to %s: it is this registry itself, whose own card and interfaces are reached only without credentials", host)
		}
		return fmt.Sprintf("refusing to connect to %s: it is this registry itself, which the registry never calls, whatever networks are allowed", host)
	case CauseReservedName:
		var re *ReservedNameError
		if errors.As(err, &re) && re.Domain == "invalid" {
			return fmt.Sprintf("the name %s is under .invalid, reserved by RFC 6761 as never valid, so it is not looked up", host)
		}
		return fmt.Sprintf("the name %s is reserved for examples and testing (RFC 2606, RFC 6761) and names no real host, so it is not looked up", host)
	case CauseRedirect:
		switch {
		case errors.Is(err, ErrUnsupportedScheme):
			return fmt.Sprintf("%s redirected to a scheme other than http or https", host)
		case errors.Is(err, ErrTooManyRedirects):
			return fmt.Sprintf("%s redirected too many times", host)
		}
		return fmt.Sprintf("%s redirected from https to plain http, which is refused", host)
	case CauseInvalidURL:
		return "the URL is not an http or https URL"
	case CauseTooLarge:
		if errors.Is(err, ErrHeadersTooLarge) {
			return fmt.Sprintf("the response headers from %s are larger than the limit", host)
		}
		return fmt.Sprintf("the response from %s is larger than the limit", host)
	case CauseCanceled:
		return fmt.Sprintf("the request to %s was canceled", host)
	case CauseDNS:
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return fmt.Sprintf("the name %s does not exist", host)
		}
		return fmt.Sprintf("the name %s could not be resolved", host)
	case CauseTLS:
		return fmt.Sprintf("TLS with %s failed: %s", host, tlsDetail(err))
	case CauseTimeout:
		return fmt.Sprintf("%s did not answer within the time limit", host)
	}
	return fmt.Sprintf("could not connect to %s, or the connection broke before a complete answer", host)
}

func tlsDetail(err error) string {
	var (
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		invalidCert x509.CertificateInvalidError
		alertErr    tls.AlertError
	)
	switch {
	case PlaintextPeer(err):
		return "the server speaks plain text, not TLS"
	case errors.As(err, &unknownAuth):
		return "the certificate is signed by an unknown authority"
	case errors.As(err, &hostErr):
		// The certificate's own names could be internal ones; not shown.
		return "the certificate is not valid for this name"
	case errors.As(err, &invalidCert):
		return "the certificate is expired, not yet valid or not usable"
	case errors.As(err, &alertErr):
		return "the server refused the handshake"
	}
	return "the handshake did not complete"
}
