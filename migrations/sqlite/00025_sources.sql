-- +goose Up
-- Sources (docs/sources.md): URLs the registry reads many agents from (an
-- ARD or AI Catalog manifest, or an origin it resolves to one), each
-- checked on its own schedule with a lease, like crawl_state. Its entries
-- of the last check are kept in source_entries with what was done with
-- each; a check replaces them.
CREATE TABLE sources (
    id                   TEXT     PRIMARY KEY,
    url                  TEXT     NOT NULL UNIQUE,
    created_at           DATETIME NOT NULL,
    created_by           TEXT     NOT NULL DEFAULT '',
    resolved_url         TEXT     NOT NULL DEFAULT '',
    resolved_via         TEXT     NOT NULL DEFAULT '',
    status               TEXT     NOT NULL DEFAULT 'pending',
    problem              TEXT     NOT NULL DEFAULT '',
    message              TEXT     NOT NULL DEFAULT '',
    etag                 TEXT     NOT NULL DEFAULT '',
    last_modified        TEXT     NOT NULL DEFAULT '',
    checked_at           DATETIME,
    changed_at           DATETIME,
    next_check_at        DATETIME NOT NULL,
    consecutive_failures INTEGER  NOT NULL DEFAULT 0,
    entry_count          INTEGER  NOT NULL DEFAULT 0,
    lease_owner          TEXT     NOT NULL DEFAULT '',
    lease_until          DATETIME
);
CREATE INDEX sources_due ON sources (next_check_at);

CREATE TABLE source_entries (
    source_id              TEXT    NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    position               INTEGER NOT NULL,
    manifest_url           TEXT    NOT NULL,
    depth                  INTEGER NOT NULL,
    identifier             TEXT    NOT NULL,
    display_name           TEXT    NOT NULL DEFAULT '',
    type                   TEXT    NOT NULL DEFAULT '',
    url                    TEXT    NOT NULL DEFAULT '',
    outcome                TEXT    NOT NULL,
    reason                 TEXT    NOT NULL DEFAULT '',
    message                TEXT    NOT NULL DEFAULT '',
    agent_id               TEXT    NOT NULL DEFAULT '',
    trust_flag             TEXT    NOT NULL DEFAULT '',
    tags                   TEXT    NOT NULL DEFAULT '[]',
    representative_queries TEXT    NOT NULL DEFAULT '[]',
    trust_manifest         TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (source_id, position)
);
CREATE INDEX source_entries_agent ON source_entries (agent_id);

-- How each agent came to the catalog: registered by a person, seeded,
-- imported, or from a source's entry (relation publishedFrom or
-- discoveredFrom). A source row ends (ended_at) when its entry leaves the
-- manifest or the source is deleted; rows are never deleted. agents.provenance
-- holds the kinds and relations of the rows not ended, for the search facet.
-- Agents catalogued before this migration are credited to how their first
-- version came (card_versions.source).
CREATE TABLE agent_provenance (
    pk           INTEGER  PRIMARY KEY AUTOINCREMENT,
    agent_pk     INTEGER  NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    kind         TEXT     NOT NULL,
    origin_key   TEXT     NOT NULL,
    by_name      TEXT     NOT NULL DEFAULT '',
    source_id    TEXT     NOT NULL DEFAULT '',
    source_url   TEXT     NOT NULL DEFAULT '',
    manifest_url TEXT     NOT NULL DEFAULT '',
    entry_id     TEXT     NOT NULL DEFAULT '',
    relation     TEXT     NOT NULL DEFAULT '',
    first_at     DATETIME NOT NULL,
    last_at      DATETIME NOT NULL,
    ended_at     DATETIME
);
CREATE UNIQUE INDEX agent_provenance_key ON agent_provenance (agent_pk, kind, origin_key);
CREATE INDEX agent_provenance_source ON agent_provenance (source_id) WHERE source_id <> '';

-- A withdrawn agent is removed (removed_at) by the registry itself because
-- nothing vouches for it any more; withdrawn_reason says why, and a
-- source entry or registration naming it again restores it.
ALTER TABLE agents ADD COLUMN provenance TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN withdrawn_reason TEXT NOT NULL DEFAULT '';

INSERT INTO agent_provenance (agent_pk, kind, origin_key, first_at, last_at)
SELECT v.agent_pk, CASE WHEN v.source = 'import' THEN 'imported' ELSE 'registered' END, '', v.received_at, v.received_at
FROM card_versions v WHERE v.number = 1;
UPDATE agents SET provenance = COALESCE((SELECT p.kind FROM agent_provenance p WHERE p.agent_pk = agents.pk), '');

-- +goose Down
ALTER TABLE agents DROP COLUMN withdrawn_reason;
ALTER TABLE agents DROP COLUMN provenance;
DROP TABLE agent_provenance;
DROP TABLE source_entries;
DROP TABLE sources;
