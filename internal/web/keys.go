package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/verify"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// KeyStore is the trust store of pinned card-signing keys, as `registry
// keys` manages it; *catalog.Store implements it.
type KeyStore interface {
	// TrustedKeys lists every key, revoked ones included, oldest first.
	TrustedKeys(ctx context.Context) ([]catalog.TrustedKey, error)
	// AddTrustedKey returns catalog.ErrConflict for an active key with the
	// same thumbprint.
	AddTrustedKey(ctx context.Context, actor catalog.Actor, k catalog.TrustedKey) (catalog.TrustedKey, error)
	// RevokeTrustedKey returns catalog.ErrNotFound for an unknown id.
	RevokeTrustedKey(ctx context.Context, actor catalog.Actor, id string, at time.Time) (catalog.TrustedKey, error)
}

// maxKeyForm bounds the add-key form: a JWK, origins and a date.
const maxKeyForm = verify.DefaultMaxJWKSBytes + 16<<10

// mountKeys adds the trusted-key pages; keys decide whose signatures
// verify, so they are the admin's.
func (h *Console) mountKeys(e *echo.Echo) {
	if h.opts.Keys == nil {
		return
	}
	e.GET("/keys", h.keys, h.guarded(auth.Admin)...)
	e.POST("/keys", h.addKey, append(h.guarded(auth.Admin), limitBody(maxKeyForm), h.checkCSRF)...)
	e.POST("/keys/:id/revoke", h.revokeKey, append(h.guarded(auth.Admin), limitBody(4<<10), h.checkCSRF)...)
}

func (h *Console) keys(c echo.Context) error {
	return h.renderKeys(c, http.StatusOK, view.Keys{})
}

// renderKeys shows the key list under the add form as v left it.
func (h *Console) renderKeys(c echo.Context, status int, v view.Keys) error {
	keys, err := h.opts.Keys.TrustedKeys(c.Request().Context())
	if err != nil {
		h.log.ErrorContext(c.Request().Context(), "console keys failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not list its keys. The failure is in its log.")
	}
	now := h.now()
	for _, k := range keys {
		kv := view.Key{ID: k.ID, KID: k.KID, Thumbprint: k.Thumbprint, Origins: k.Origins, CreatedAt: k.CreatedAt,
			State: k.State(now)}
		switch {
		case k.RevokedAt != nil:
			kv.Until = *k.RevokedAt
		case k.NotAfter != nil:
			kv.Until = *k.NotAfter
		}
		v.Keys = append(v.Keys, kv)
	}
	v.CSRFToken = h.csrfToken(c)
	return h.render(c, status, page{title: "Trusted keys", body: templates.KeysPage(v)})
}

func (h *Console) addKey(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		return h.errorPage(c, http.StatusRequestEntityTooLarge, "Too large", "The key form is too large or unreadable.")
	}
	f := c.Request().PostForm
	v := view.Keys{JWK: f.Get("jwk"), KID: strings.TrimSpace(f.Get("kid")), OriginsText: f.Get("origins"), NotAfter: strings.TrimSpace(f.Get("not_after"))}
	origins := strings.Fields(v.OriginsText)
	var expiry time.Time
	if v.NotAfter != "" {
		t, err := time.Parse(time.RFC3339, v.NotAfter)
		if err != nil {
			v.Error = "The expiry must be an RFC 3339 time, such as 2027-01-01T00:00:00Z."
			return h.renderKeys(c, http.StatusBadRequest, v)
		}
		expiry = t
	}
	if len(origins) == 0 {
		v.Error = "Give at least one origin the key may sign for (https://host[:port]), or * for any."
		return h.renderKeys(c, http.StatusBadRequest, v)
	}
	k, err := verify.NewTrustedKey([]byte(v.JWK), v.KID, origins, expiry)
	if err != nil {
		// verify's message describes what is wrong with the given key.
		v.Error = err.Error()
		return h.renderKeys(c, http.StatusBadRequest, v)
	}
	ctx := c.Request().Context()
	added, err := h.opts.Keys.AddTrustedKey(ctx, h.actor(c), k)
	if errors.Is(err, catalog.ErrConflict) {
		v.Error = fmt.Sprintf("This key (thumbprint %s) is pinned already; revoke it first to change it.", k.Thumbprint)
		return h.renderKeys(c, http.StatusConflict, v)
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console key add failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not store the key. The failure is in its log.")
	}
	h.log.InfoContext(ctx, "console: trusted key added", "key_id", added.ID, "kid", added.KID, "by", h.callerName(c))
	return c.Redirect(http.StatusSeeOther, "/keys")
}

func (h *Console) revokeKey(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.notFound(c)
	}
	ctx := c.Request().Context()
	k, err := h.opts.Keys.RevokeTrustedKey(ctx, h.actor(c), id, h.now())
	if errors.Is(err, catalog.ErrNotFound) {
		return h.errorPage(c, http.StatusNotFound, "Key not found", "No trusted key has this id.")
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console key revoke failed", "key_id", id, "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not revoke the key. The failure is in its log.")
	}
	h.log.InfoContext(ctx, "console: trusted key revoked", "key_id", k.ID, "kid", k.KID, "by", h.callerName(c))
	return c.Redirect(http.StatusSeeOther, "/keys")
}
