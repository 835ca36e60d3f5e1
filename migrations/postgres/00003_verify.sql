-- +goose Up
-- One verification report per card version (verify.Report as JSON). A
-- report is due again when it is stale (a trusted key its signatures name
-- changed) or recheck_at has passed (keys_expire_at — the earliest expiry
-- of a JWKS cache entry or pinned key it relied on — or its maximum age).
CREATE TABLE verifications (
    agent_pk         BIGINT      NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    version          INTEGER     NOT NULL,
    status           TEXT        NOT NULL,
    report           TEXT        NOT NULL,
    verified_at      TIMESTAMPTZ NOT NULL,
    keys_expire_at   TIMESTAMPTZ,
    recheck_at       TIMESTAMPTZ NOT NULL,
    trust_generation BIGINT      NOT NULL,
    stale            BOOLEAN     NOT NULL DEFAULT FALSE,
    PRIMARY KEY (agent_pk, version)
);
CREATE INDEX verifications_recheck_at ON verifications (recheck_at);
CREATE INDEX verifications_stale ON verifications (agent_pk) WHERE stale ;
-- Versions waiting for their first report are the agents still unchecked.
CREATE INDEX agents_signature_status ON agents (signature_status, pk);

-- The kids the signatures of an agent's current card name, so a change of
-- the trusted keys under a kid marks exactly those agents' reports stale.
CREATE TABLE verification_kids (
    kid      TEXT   NOT NULL,
    agent_pk BIGINT NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    PRIMARY KEY (kid, agent_pk)
);
CREATE INDEX verification_kids_agent ON verification_kids (agent_pk);

-- The admin-managed trust store of pinned public keys. Rows are never
-- deleted: revocation is a timestamp, so reports keep naming a known key.
CREATE TABLE trusted_keys (
    id         TEXT        PRIMARY KEY,
    kid        TEXT        NOT NULL,
    jwk        TEXT        NOT NULL,
    thumbprint TEXT        NOT NULL,
    origins    TEXT        NOT NULL DEFAULT '[]',
    not_after  TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX trusted_keys_kid ON trusted_keys (kid);
CREATE UNIQUE INDEX trusted_keys_active_thumbprint ON trusted_keys (thumbprint) WHERE revoked_at IS NULL;

-- Bumped by every change of trusted_keys. Storing a report takes a share
-- lock on this row and a key change updates it, so the two serialize: a
-- report made under an older generation than the one current when it is
-- stored is stale at once, and one stored first is marked stale by the
-- key change through verification_kids.
CREATE TABLE trust_store (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT  NOT NULL
);
INSERT INTO trust_store (id, generation) VALUES (1, 0);

-- +goose Down
DROP INDEX agents_signature_status;
DROP TABLE trust_store;
DROP TABLE trusted_keys;
DROP TABLE verification_kids;
DROP TABLE verifications;
