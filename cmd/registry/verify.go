package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/verify"
)

// Exit codes of `registry verify` (documented in docs/verification.md): the
// signature verdict, or 4 when there is no verdict at all.
const (
	verifyVerified       = 0
	verifyInvalid        = 1
	verifyUnsigned       = 2
	verifyKeyUnavailable = 3
	verifyError          = 4
)

// stringsFlag collects a repeated flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

// runVerify checks one card, from a file or a URL: signatures, security
// schemes, and with --probe its declared transports.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	var (
		asJSON, probe, oidc, insecureJKU   bool
		jwksSrc, trustKeys, trustedOrigins stringsFlag
	)
	cfg, fs, code, ok := loadConfig("verify", "[flags] CARD_FILE_OR_URL", config.Logging|config.Cards|config.Fetching, args, stderr, getenv,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
			fs.BoolVar(&probe, "probe", false, "probe every declared interface live (a GetTask for a random id)")
			fs.BoolVar(&oidc, "oidc", true, "fetch openIdConnectUrl discovery documents")
			fs.BoolVar(&insecureJKU, "insecure-jku", false, "accept http:// jku URLs (development only)")
			fs.Var(&jwksSrc, "jwks", "trust this JWKS (FILE or https URL) for this run; repeatable")
			fs.Var(&trustKeys, "trust-key", "trust this public key (a JWK file with its kid) for this run; repeatable")
			fs.Var(&trustedOrigins, "trust-jku-origin", "accept jku URLs on this origin for any card; repeatable")
		})
	if !ok {
		if code == exitOK {
			return exitOK
		}
		return verifyError
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "registry verify: give exactly one card file or URL")
		fs.Usage()
		return verifyError
	}
	self, err := registrySelf(cfg.Server)
	if err != nil {
		fmt.Fprintf(stderr, "registry verify: %v\n", err)
		return verifyError
	}
	client := newOutboundClient(cfg, self, 0)
	defer client.CloseIdleConnections()

	var keys verify.StaticKeys
	for _, src := range jwksSrc {
		data, err := readSource(ctx, client, src, verify.DefaultMaxJWKSBytes)
		if err != nil {
			fmt.Fprintf(stderr, "registry verify: --jwks %s: %v\n", src, err)
			return verifyError
		}
		set, err := verify.ParseJWKS(data)
		if err != nil {
			fmt.Fprintf(stderr, "registry verify: --jwks %s: %v\n", src, err)
			return verifyError
		}
		for _, k := range set {
			keys = append(keys, verify.PinnedKey{KID: k.KeyID, Key: k, Origins: []string{"*"}, Source: verify.KeySourceCLI})
		}
	}
	for _, path := range trustKeys {
		k, err := readKeyFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "registry verify: --trust-key %s: %v\n", path, err)
			return verifyError
		}
		keys = append(keys, verify.PinnedKey{KID: k.KeyID, Key: k, Origins: []string{"*"}, Source: verify.KeySourceCLI})
	}

	input := fs.Arg(0)
	raw, cardURL, err := loadCard(ctx, client, input, cfg.Outbound.MaxCardBytes)
	if err != nil {
		fmt.Fprintf(stderr, "registry verify: %v\n", err)
		return verifyError
	}
	c, err := card.Parse(raw, cardLimits(cfg))
	if err != nil {
		fmt.Fprintf(stderr, "registry verify: %s: %v\n", input, err)
		return verifyError
	}
	v := verify.New(verify.Options{
		Client:             client,
		Keys:               keys,
		TrustedJWKSOrigins: trustedOrigins,
		AllowInsecureJKU:   insecureJKU,
		Probe:              probe,
		FetchOIDC:          oidc,
		Logger:             newLogger(cfg, stderr),
	})
	rep := v.Verify(ctx, c, cardURL)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "registry verify: %v\n", err)
			return verifyError
		}
	} else {
		writeVerifyText(stdout, input, c, rep)
	}
	switch rep.Signatures.Status {
	case verify.StatusVerified:
		return verifyVerified
	case verify.StatusInvalid:
		return verifyInvalid
	case verify.StatusUnsigned:
		return verifyUnsigned
	}
	return verifyKeyUnavailable
}

// loadCard reads a card file, or fetches a card URL as the crawler does
// (well-known path for a bare origin, A2A-Version header, size cap).
func loadCard(ctx context.Context, client *safehttp.Client, input string, max int64) ([]byte, string, error) {
	if strings.HasPrefix(input, "http://") || strings.HasPrefix(input, "https://") {
		res, err := crawler.NewFetcher(client, max).Fetch(ctx, input, crawler.Conditional{})
		if err != nil {
			return nil, "", err
		}
		return res.Body, res.URL, nil
	}
	raw, err := readFileMax(input, max)
	return raw, "", err
}

func readSource(ctx context.Context, client *safehttp.Client, src string, max int64) ([]byte, error) {
	if !strings.HasPrefix(src, "https://") && !strings.HasPrefix(src, "http://") {
		return readFileMax(src, max)
	}
	resp, err := client.Get(ctx, src)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return safehttp.ReadBody(resp, max)
}

func readFileMax(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return data, nil
}

// readKeyFile reads one public JWK with a kid. Signatures select their key
// by kid, so a bare PEM key (which has none) is refused with a hint.
func readKeyFile(path string) (jose.JSONWebKey, error) {
	data, err := readFileMax(path, verify.DefaultMaxJWKSBytes)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	if block, _ := pem.Decode(data); block != nil {
		return jose.JSONWebKey{}, errors.New("a PEM key carries no kid; give the key as a JWK with the kid the card's signatures name")
	}
	keys, err := verify.ParseJWKS(data)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	if len(keys) != 1 || keys[0].KeyID == "" {
		return jose.JSONWebKey{}, errors.New("want exactly one public JWK with a kid")
	}
	return keys[0], nil
}

func writeVerifyText(w io.Writer, input string, c *card.Card, rep *verify.Report) {
	fmt.Fprintf(w, "%s: %q\n", input, c.Name)
	fmt.Fprintf(w, "signature: %s\n", rep.Signatures.Status)
	if s := rep.Signatures.Signer; s != nil {
		fmt.Fprintf(w, "  signer: kid %s, %s key %s, source %s", s.KID, s.KeyType, s.Thumbprint, s.Source)
		if s.JKU != "" {
			fmt.Fprintf(w, " (%s)", s.JKU)
		}
		fmt.Fprintln(w)
	}
	if rep.Signatures.Rotation {
		fmt.Fprintln(w, "  key rotation: valid signatures by several keys")
	}
	for _, e := range rep.Signatures.Entries {
		fmt.Fprintf(w, "  [%d] %s alg=%s kid=%s", e.Index, e.Result, e.Alg, e.KID)
		if e.Form != "" {
			fmt.Fprintf(w, " form=%s", e.Form)
		}
		fmt.Fprintln(w)
		if e.Problem != "" {
			fmt.Fprintf(w, "      %s\n", e.Problem)
		}
		if len(e.UnsignedFields) > 0 {
			fmt.Fprintf(w, "      not covered by the signature: %s\n", strings.Join(e.UnsignedFields, ", "))
		}
		for _, n := range e.Notes {
			fmt.Fprintf(w, "      note: %s\n", n)
		}
	}
	for _, p := range rep.Transports {
		fmt.Fprintf(w, "transport %s %s %s: %s", p.Binding, p.ProtocolVersion, p.URL, p.Status)
		if p.Evidence != "" {
			fmt.Fprintf(w, " (%s, %d ms)", p.Evidence, p.LatencyMS)
		}
		fmt.Fprintln(w)
		if p.Problem != "" {
			fmt.Fprintf(w, "  %s\n", p.Problem)
		}
	}
	if len(rep.Security) == 0 {
		fmt.Fprintln(w, "security: no findings")
	}
	for _, f := range rep.Security {
		fmt.Fprintf(w, "security %s %s at %s: %s\n", f.Severity, f.Code, f.Path, f.Message)
	}
	if len(rep.Content) == 0 {
		fmt.Fprintln(w, "content: no findings")
	}
	// Messages and excerpts show hidden characters as ⟨U+XXXX⟩, so the
	// terminal does not obey a bidirectional override in a card.
	for _, f := range rep.Content {
		fmt.Fprintf(w, "content %s %s at %s: %s\n", f.Severity, f.Code, f.Path, f.Message)
	}
}
