package view

import "time"

// Webhooks is the webhook subscriptions page: the list and the form that
// adds one.
type Webhooks struct {
	Items     []Webhook
	CSRFToken string
	// EventTypes are the event types a subscription may name.
	EventTypes []string
	Form       WebhookForm
	// Created is the subscription just added, with its secret: set only
	// on the answer to the form, the one time the secret is shown.
	Created *WebhookCreated
}

// WebhookForm is the add form as the admin left it, with what is wrong
// per field ("url", "event_types", "filter").
type WebhookForm struct {
	URL, Filter string
	EventTypes  map[string]bool
	Errors      map[string]string
}

// WebhookCreated is a subscription just added and its signing secret.
type WebhookCreated struct {
	ID, URL, Secret string
}

// Webhook is one subscription and its latest deliveries.
type Webhook struct {
	ID, URL, Filter string
	EventTypes      []string
	CreatedAt       time.Time
	CreatedBy       string
	// Disabled is set when deliveries failed for a day; Reason says why.
	Disabled       bool
	DisabledReason string
	Deliveries     []WebhookDelivery
}

// WebhookPage is one subscription with its delivery log, or the step
// that confirms deleting it.
type WebhookPage struct {
	Webhook
	CSRFToken string
}

// WebhookDelivery is one entry of a subscription's delivery log.
type WebhookDelivery struct {
	ID, AgentID, AgentURL, EventType, State string
	Attempts, LastStatus                    int
	LastError                               string
	CreatedAt                               time.Time
}
