-- +goose Up
CREATE TABLE agents (
    pk               INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    card_url         TEXT    NOT NULL UNIQUE,
    name             TEXT    NOT NULL,
    description      TEXT    NOT NULL,
    provider         TEXT    NOT NULL DEFAULT '',
    agent_version    TEXT    NOT NULL DEFAULT '',
    shape            TEXT    NOT NULL,
    protocol_versions TEXT   NOT NULL DEFAULT '',
    summary          TEXT    NOT NULL,
    signature_status TEXT    NOT NULL DEFAULT 'unchecked',
    health           TEXT    NOT NULL DEFAULT 'unknown',
    current_version  INTEGER NOT NULL,
    raw_sha256       TEXT    NOT NULL,
    seq              INTEGER NOT NULL,
    created_at       DATETIME NOT NULL,
    updated_at       DATETIME NOT NULL,
    fetched_at       DATETIME NOT NULL
);
CREATE INDEX agents_seq ON agents (seq);
CREATE INDEX agents_updated_at ON agents (updated_at);

CREATE TABLE card_versions (
    agent_pk    INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    number      INTEGER NOT NULL,
    sha256      TEXT    NOT NULL,
    size        INTEGER NOT NULL,
    source      TEXT    NOT NULL,
    received_at DATETIME NOT NULL,
    raw         BLOB    NOT NULL,
    -- A rowid table, unlike the small link tables: WITHOUT ROWID suits rows
    -- well under a page, and raw cards are kilobytes.
    PRIMARY KEY (agent_pk, number)
);

CREATE TABLE skills (
    agent_pk     INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL,
    skill_id     TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    description  TEXT    NOT NULL,
    examples     TEXT    NOT NULL DEFAULT '[]',
    -- Tags and effective media types as JSON arrays: per-agent filtering
    -- uses agent_facets, so separate link tables would only cost inserts.
    tags         TEXT    NOT NULL DEFAULT '[]',
    input_modes  TEXT    NOT NULL DEFAULT '[]',
    output_modes TEXT    NOT NULL DEFAULT '[]',
    input_modes_inherited  INTEGER NOT NULL,
    output_modes_inherited INTEGER NOT NULL,
    PRIMARY KEY (agent_pk, ordinal)
) WITHOUT ROWID;
CREATE INDEX skills_skill_id ON skills (skill_id);

CREATE TABLE interfaces (
    agent_pk         INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    ordinal          INTEGER NOT NULL,
    url              TEXT    NOT NULL,
    binding          TEXT    NOT NULL,
    protocol_version TEXT    NOT NULL,
    tenant           TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (agent_pk, ordinal)
) WITHOUT ROWID;

CREATE TABLE security_schemes (
    agent_pk INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    name     TEXT    NOT NULL,
    type     TEXT    NOT NULL,
    details  TEXT    NOT NULL,
    PRIMARY KEY (agent_pk, name)
) WITHOUT ROWID;

CREATE TABLE lint_findings (
    agent_pk INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    ordinal  INTEGER NOT NULL,
    code     TEXT    NOT NULL,
    severity TEXT    NOT NULL,
    path     TEXT    NOT NULL,
    message  TEXT    NOT NULL,
    PRIMARY KEY (agent_pk, ordinal)
) WITHOUT ROWID;
CREATE INDEX lint_findings_code ON lint_findings (code);

-- The filterable view: one row per (agent, field, value). The in-memory
-- search index is built from it; there is no (field, value) index because
-- no query of ours needs one and it would double the table's size.
CREATE TABLE agent_facets (
    agent_pk INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    field    TEXT    NOT NULL,
    value    TEXT    NOT NULL,
    PRIMARY KEY (agent_pk, field, value)
) WITHOUT ROWID;


-- +goose Down
DROP TABLE agent_facets;
DROP TABLE lint_findings;
DROP TABLE security_schemes;
DROP TABLE interfaces;
DROP TABLE skills;
DROP TABLE card_versions;
DROP TABLE agents;
