package catalog

import "time"

// The records below mirror migrations/*/00001_catalog.sql. They never leave
// the package: handlers see Agent, Summary and friends.

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
	AgentPK    int64 `gorm:"column:agent_pk;primaryKey"`
	Number     int   `gorm:"primaryKey"`
	SHA256     string `gorm:"column:sha256"`
	Size       int
	Source     string
	ReceivedAt time.Time
	Raw        []byte
}

func (cardVersionRecord) TableName() string { return "card_versions" }

type skillRecord struct {
	AgentPK     int64 `gorm:"column:agent_pk;primaryKey"`
	Ordinal     int   `gorm:"primaryKey"`
	SkillID     string
	Name        string
	Description string
	Examples    string
}

func (skillRecord) TableName() string { return "skills" }

type skillTagRecord struct {
	AgentPK int64 `gorm:"column:agent_pk;primaryKey"`
	Ordinal int   `gorm:"primaryKey"`
	Tag     string `gorm:"primaryKey"`
}

func (skillTagRecord) TableName() string { return "skill_tags" }

type skillModeRecord struct {
	AgentPK   int64  `gorm:"column:agent_pk;primaryKey"`
	Ordinal   int    `gorm:"primaryKey"`
	Direction string `gorm:"primaryKey"`
	Mode      string `gorm:"primaryKey"`
	Inherited bool
}

func (skillModeRecord) TableName() string { return "skill_modes" }

type interfaceRecord struct {
	AgentPK         int64 `gorm:"column:agent_pk;primaryKey"`
	Ordinal         int   `gorm:"primaryKey"`
	URL             string
	Binding         string
	ProtocolVersion string
	Tenant          string
}

func (interfaceRecord) TableName() string { return "interfaces" }

type securitySchemeRecord struct {
	AgentPK int64  `gorm:"column:agent_pk;primaryKey"`
	Name    string `gorm:"primaryKey"`
	Type    string
	Details string
}

func (securitySchemeRecord) TableName() string { return "security_schemes" }

type lintFindingRecord struct {
	AgentPK  int64 `gorm:"column:agent_pk;primaryKey"`
	Ordinal  int   `gorm:"primaryKey"`
	Code     string
	Severity string
	Path     string
	Message  string
}

func (lintFindingRecord) TableName() string { return "lint_findings" }

type facetRecord struct {
	AgentPK int64  `gorm:"column:agent_pk;primaryKey"`
	Field   string `gorm:"primaryKey"`
	Value   string `gorm:"primaryKey"`
}

func (facetRecord) TableName() string { return "agent_facets" }
