// Package embeddings is search's optional semantic layer on the outside:
// a client of an OpenAI-compatible embeddings API (POST {url}/embeddings,
// https://platform.openai.com/docs/api-reference/embeddings), the worker
// that embeds every agent's text in the background and stores the vectors
// in the catalog, and the embedding of searches' text (bounded in time,
// remembered in a small LRU) that the catalog fuses with its lexical
// ranking. Its state (model, coverage, last error) is what /readyz, the
// metrics and the console show. Requests go through the registry's one
// outbound client (internal/safehttp) and its allow-list.
package embeddings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"

	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/search"
)

// Error is a failed embedding, in words fit to show a searcher or an
// operator: it names what happened, never the URL or the key.
type Error struct {
	// Kind is machine-readable: unreachable, timeout, status,
	// bad_response or dimension.
	Kind string
	msg  string
	err  error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// Error kinds.
const (
	KindUnreachable = "unreachable"
	KindTimeout     = "timeout"
	KindStatus      = "status"
	KindBadResponse = "bad_response"
	KindDimension   = "dimension"
)

// ClientConfig says where the API is and what it answers.
type ClientConfig struct {
	// URL is the API's base: requests go to URL + "/embeddings".
	URL       string
	Model     string
	Dimension int
	// Key, when set, is sent as a bearer token.
	Key string
}

// Client embeds texts through an OpenAI-compatible API.
type Client struct {
	http     *safehttp.Client
	endpoint string
	cfg      ClientConfig
}

// NewClient returns a client sending its requests through hc.
func NewClient(hc *safehttp.Client, cfg ClientConfig) *Client {
	return &Client{http: hc, endpoint: strings.TrimRight(cfg.URL, "/") + "/embeddings", cfg: cfg}
}

// Model and Dimension are the configured model's.
func (c *Client) Model() string  { return c.cfg.Model }
func (c *Client) Dimension() int { return c.cfg.Dimension }

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type response struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// Embed returns the vectors of texts, in order, each of the configured
// dimension and normalised to unit length. Any other answer is an *Error.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.cfg.Model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("encoding embeddings request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Kind: KindUnreachable, msg: "the embeddings URL is not usable", err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, &Error{Kind: KindStatus, msg: fmt.Sprintf("the embeddings API answered HTTP %d", resp.StatusCode)}
	}
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		if safehttp.Cause(err) != "" && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, transportError(ctx, err)
		}
		return nil, &Error{Kind: KindBadResponse, msg: "the embeddings API's answer is not the expected JSON", err: err}
	}
	return c.vectors(r, len(texts))
}

// vectors checks an answer against the request: one vector per text (in
// the order of their index when given), each of the configured length,
// finite and not zero.
func (c *Client) vectors(r response, n int) ([][]float32, error) {
	if len(r.Data) != n {
		return nil, &Error{Kind: KindBadResponse, msg: fmt.Sprintf("the embeddings API answered %d vectors for %d texts", len(r.Data), n)}
	}
	out := make([][]float32, n)
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n || out[at] != nil {
			return nil, &Error{Kind: KindBadResponse, msg: "the embeddings API's answer has a bad or repeated index"}
		}
		if len(d.Embedding) != c.cfg.Dimension {
			return nil, &Error{Kind: KindDimension, msg: fmt.Sprintf("the embeddings API answered vectors of %d dimensions, not the %d configured", len(d.Embedding), c.cfg.Dimension)}
		}
		v := make([]float32, len(d.Embedding))
		for j, f := range d.Embedding {
			if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxFloat32 {
				return nil, &Error{Kind: KindBadResponse, msg: "the embeddings API answered a vector that is not finite"}
			}
			v[j] = float32(f)
		}
		if !search.Normalize(v) {
			return nil, &Error{Kind: KindBadResponse, msg: "the embeddings API answered a zero vector"}
		}
		out[at] = v
	}
	return out, nil
}

// transportError words a failed exchange by its cause.
func transportError(ctx context.Context, err error) error {
	switch cause := safehttp.Cause(err); {
	case cause == safehttp.CauseTimeout || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, msg: "the embeddings API did not answer in time", err: err}
	case cause == safehttp.CauseBlockedAddress || cause == safehttp.CauseSelf || cause == safehttp.CauseReservedName:
		return &Error{Kind: KindUnreachable, msg: "the embeddings API's address is not allowed (see --allow-networks)", err: err}
	case cause == safehttp.CauseTooLarge:
		return &Error{Kind: KindBadResponse, msg: "the embeddings API's answer is too large", err: err}
	case cause != "":
		return &Error{Kind: KindUnreachable, msg: "the embeddings API cannot be reached (" + cause + ")", err: err}
	}
	return &Error{Kind: KindUnreachable, msg: "the embeddings API cannot be reached", err: err}
}
