package safehttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrBodyTooLarge is wrapped by reads past a body cap.
var ErrBodyTooLarge = errors.New("safehttp: response body too large")

// limitedBody fails reads past max bytes instead of silently truncating
// (io.LimitReader would hand a truncated card to the parser).
type limitedBody struct {
	rc        io.ReadCloser
	limit     int64
	remaining int64
	err       error
}

// newLimitedBody wraps rc. A declared Content-Length over the cap fails the
// first read without reading, but the response itself (status, headers)
// stays usable: a huge 404 page is still a 404.
func newLimitedBody(rc io.ReadCloser, contentLength, max int64) *limitedBody {
	b := &limitedBody{rc: rc, limit: max, remaining: max}
	if contentLength > max {
		b.err = fmt.Errorf("%w: Content-Length %d exceeds limit of %d bytes", ErrBodyTooLarge, contentLength, max)
	}
	return b
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	// Ask for one byte more than allowed to tell "exactly at the cap" from
	// "over it".
	if int64(len(p)) > b.remaining+1 {
		p = p[:b.remaining+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) <= b.remaining {
		b.remaining -= int64(n)
		return n, err
	}
	n = int(b.remaining)
	b.remaining = 0
	b.err = fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, b.limit)
	return n, b.err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// ReadBody reads resp.Body whole, failing with ErrBodyTooLarge past max
// bytes (the client's own cap still applies when it is smaller). It does
// not close the body.
func ReadBody(resp *http.Response, max int64) ([]byte, error) {
	if resp.ContentLength > max {
		return nil, fmt.Errorf("%w: Content-Length %d exceeds limit of %d bytes", ErrBodyTooLarge, resp.ContentLength, max)
	}
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, max)
	}
	return buf.Bytes(), nil
}
