// Package webhook delivers catalog events to subscribers as the Standard
// Webhooks specification describes (https://www.standardwebhooks.com,
// spec/standard-webhooks.md): a JSON body {type, timestamp, data} signed
// with HMAC-SHA256 over "id.timestamp.body", at least once, retried with
// exponential backoff for a day under the same webhook-id, in order per
// agent.
//
// Events are the catalog's change feed, which every write appends to in
// its own transaction: the feed is the outbox. The Dispatcher fans feed
// entries out into delivery rows under a durable cursor (both in one
// transaction) and sends due deliveries it leases; see
// catalog.EnqueueWebhookDeliveries and catalog.ClaimWebhookDeliveries for
// why a crash loses none and replicas send each once.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Event types. A new kind of event (agent.policy) is a catalog event
// kind (catalog.NewEvent) and one entry of eventTypes.
const (
	EventRegistered     = "agent.registered"
	EventUpdated        = "agent.updated"
	EventRemoved        = "agent.removed"
	EventRestored       = "agent.restored"
	EventHealth         = "agent.health"
	EventSignature      = "agent.signature"
	EventListing        = "agent.listing"
	EventWithdrawn      = "agent.withdrawn"
	EventContentFinding = "agent.content_finding"
	EventSourceFailed   = "source.failed"
	// EventPolicy: the admission policy's rules failing on the agent
	// changed, or it refused a card a crawl brought.
	EventPolicy = "agent.policy"
	// EventKeyChanged: the agent's current version is signed by a key
	// other than the previous version's, whatever the verdict.
	EventKeyChanged = "agent.key_changed"
)

// eventTypes maps change feed and event kinds onto event types.
var eventTypes = map[string]string{
	catalog.ChangeCreated:       EventRegistered,
	catalog.ChangeUpdated:       EventUpdated,
	catalog.ChangeRemoved:       EventRemoved,
	catalog.ChangeRestored:      EventRestored,
	catalog.EventHealth:         EventHealth,
	catalog.EventSignature:      EventSignature,
	catalog.EventListing:        EventListing,
	catalog.EventWithdrawn:      EventWithdrawn,
	catalog.EventContentFinding: EventContentFinding,
	catalog.EventSourceFailed:   EventSourceFailed,
	catalog.EventPolicy:         EventPolicy,
	catalog.EventKeyChanged:     EventKeyChanged,
}

// EventTypes lists the event types a subscription may name.
func EventTypes() []string {
	out := make([]string, 0, len(eventTypes))
	for _, t := range eventTypes {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// agentless tells the event types that name no agent: a subscription's
// filter, which selects agents, does not apply to them.
func agentless(typ string) bool { return typ == EventSourceFailed }

// ErrInvalidEventType is returned for an event type that is not one of
// EventTypes.
var ErrInvalidEventType = errors.New("webhook: unknown event type")

// ValidEventTypes checks that every type is known and at least one given.
func ValidEventTypes(types []string) error {
	if len(types) == 0 {
		return fmt.Errorf("%w: none given", ErrInvalidEventType)
	}
	for _, t := range types {
		if _, ok := knownTypes[t]; !ok {
			return fmt.Errorf("%w: %q", ErrInvalidEventType, t)
		}
	}
	return nil
}

var knownTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range eventTypes {
		m[t] = true
	}
	return m
}()

// secretPrefix marks a Standard Webhooks signing secret; the rest is the
// base64 key.
const secretPrefix = "whsec_"

// NewSecret returns a new signing secret "whsec_" + base64 of 32 random
// bytes (the spec asks for 24 to 64).
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// NewID returns a subscription id.
func NewID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "wh_" + base64.RawURLEncoding.EncodeToString(b)
}

// MessageID is the webhook-id of a delivery: the same on every attempt
// of it, distinct across deliveries.
func MessageID(deliveryPK int64) string {
	return "msg_" + strconv.FormatInt(deliveryPK, 10)
}

// Sign returns the webhook-signature header value of body sent as
// message id at ts: "v1," + base64(HMAC-SHA256(key, id.ts.body)), the key
// being the secret's base64 part decoded.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return "", fmt.Errorf("decoding webhook secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}
