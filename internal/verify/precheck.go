package verify

import (
	"context"
	"encoding/json"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// DefaultPrecheckTimeout bounds one Precheck: the key fetches of a card's
// signatures (each within JWKSTimeout) and of its publisher's proof. A key
// not fetched in time is key_unavailable, which a rule sees as such.
const DefaultPrecheckTimeout = 10 * time.Second

// Precheck checks what the admission policy reads of a card before the
// write that would store it (catalog.Precheck): its signatures (the JWS
// check, with keys resolved through Options.Client, the guarded client,
// within DefaultPrecheckTimeout overall), its publisher and its content
// scan. Interfaces are not probed: a probe reaches every endpoint the
// card declares, and waits for them, which a registration must not.
//
// cardURL is the URL the card is stored under, as the runner verifies it
// later (Verify); the same keys give the same verdict then.
func (v *Verifier) Precheck(ctx context.Context, c *card.Card, cardURL string) *catalog.Precheck {
	ctx, cancel := context.WithTimeout(ctx, DefaultPrecheckTimeout)
	defer cancel()
	r := v.checkCard(ctx, c, cardURL)
	raw, err := json.Marshal(r)
	if err != nil {
		// A report always encodes; without it the rules still see the
		// verdict.
		raw = nil
	}
	return &catalog.Precheck{SignatureStatus: string(r.Signatures.Status), Report: raw}
}
