package view

import "time"

// Webhooks is the webhook subscriptions page.
type Webhooks struct {
	Items []Webhook
}

// Webhook is one subscription and its latest deliveries.
type Webhook struct {
	ID, URL, Filter string
	EventTypes      []string
	CreatedAt       time.Time
	// Disabled is set when deliveries failed for a day; Reason says why.
	Disabled       bool
	DisabledReason string
	Deliveries     []WebhookDelivery
}

// WebhookDelivery is one entry of a subscription's delivery log.
type WebhookDelivery struct {
	ID, AgentID, AgentURL, EventType, State string
	Attempts, LastStatus                    int
	LastError                               string
	CreatedAt                               time.Time
}
