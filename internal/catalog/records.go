package catalog

import "time"

// Records of the tables gorm reads and writes by struct (the derived tables
// are written with multi-row INSERTs, see insertRows). They never leave the
// package: callers see Agent, Summary and friends.

type agentRecord struct {
	PK               int64 `gorm:"column:pk;primaryKey"`
	ID               string
	CardURL          string
	Name             string
	Description      string
	Provider         string
	AgentVersion     string
	Shape            string
	ProtocolVersions string
	Summary          string
	SignatureStatus  string
	Health           string
	CurrentVersion   int
	RawSHA256        string `gorm:"column:raw_sha256"`
	Seq              int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
	FetchedAt        time.Time
}

func (agentRecord) TableName() string { return "agents" }

type cardVersionRecord struct {
	AgentPK    int64  `gorm:"column:agent_pk;primaryKey"`
	Number     int    `gorm:"primaryKey"`
	SHA256     string `gorm:"column:sha256"`
	Size       int
	Source     string
	ReceivedAt time.Time
	Raw        []byte
}

func (cardVersionRecord) TableName() string { return "card_versions" }

// facetRecord is one (field, value) row of agent_facets, without its agent.
type facetRecord struct {
	Field string
	Value string
}
