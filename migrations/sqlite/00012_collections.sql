-- +goose Up
-- Named collections of agents. A collection without groups is visible to
-- everyone who may browse; one with groups (a JSON array of OIDC claim
-- values) only to callers holding one of them. name_key is the name in
-- lower case: names match case-insensitively, as search filters do.
CREATE TABLE collections (
    pk          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT     NOT NULL,
    name_key    TEXT     NOT NULL UNIQUE,
    description TEXT     NOT NULL DEFAULT '',
    groups_json TEXT     NOT NULL DEFAULT '[]',
    created_at  DATETIME NOT NULL
);
CREATE TABLE collection_members (
    collection_pk INTEGER NOT NULL REFERENCES collections (pk) ON DELETE CASCADE,
    agent_pk      INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    added_at      DATETIME NOT NULL,
    PRIMARY KEY (collection_pk, agent_pk)
);
CREATE INDEX collection_members_agent ON collection_members (agent_pk);

-- +goose Down
DROP TABLE collection_members;
DROP TABLE collections;
