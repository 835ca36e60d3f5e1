package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
)

// assetPrefix is where assets are served, under a content hash:
// /static/{hash}/{name}. A new build changes the hash, so browsers may
// cache an asset for good.
const assetPrefix = "/static/"

// asset is one embedded file, ready to serve.
type asset struct {
	body, gz []byte
	ctype    string
	hash     string
}

// assets are the console's static files, hashed and compressed once.
type assets struct {
	byName        map[string]*asset
	cssURL, jsURL string
}

func loadAssets(fsys fs.FS) (*assets, error) {
	as := &assets{byName: make(map[string]*asset)}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(name, ".go") {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		var gz bytes.Buffer
		zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		if err != nil {
			return err
		}
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" || strings.HasSuffix(name, "LICENSE") {
			ctype = "text/plain; charset=utf-8"
		}
		as.byName[name] = &asset{body: body, gz: gz.Bytes(), ctype: ctype, hash: hex.EncodeToString(sum[:6])}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for name, url := range map[string]*string{"console.css": &as.cssURL, "htmx.min.js": &as.jsURL} {
		a, ok := as.byName[name]
		if !ok {
			return nil, fmt.Errorf("asset %s missing", name)
		}
		*url = assetPrefix + a.hash + "/" + name
	}
	return as, nil
}

func (h *Console) asset(c echo.Context) error {
	a, ok := h.assets.byName[c.Param("name")]
	if !ok {
		return h.notFound(c)
	}
	hd := c.Response().Header()
	hd.Set(echo.HeaderContentType, a.ctype)
	hd.Add("Vary", echo.HeaderAcceptEncoding)
	hd.Set("ETag", `"`+a.hash+`"`)
	if c.Param("hash") == a.hash {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		// A page of another build asks for its version: serve ours, but
		// let no cache keep it under that name.
		hd.Set("Cache-Control", "no-cache")
	}
	if c.Request().Header.Get("If-None-Match") == `"`+a.hash+`"` {
		return c.NoContent(http.StatusNotModified)
	}
	body := a.body
	if acceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) {
		hd.Set(echo.HeaderContentEncoding, "gzip")
		body = a.gz
	}
	return c.Blob(http.StatusOK, a.ctype, body)
}

// acceptsGzip reads Accept-Encoding (RFC 9110 §12.5.3): gzip listed and
// not refused with q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
