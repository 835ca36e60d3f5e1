-- +goose Up
-- The admission policy's results (serve --policy): one row per rule that
-- did not pass on a card version (outcome fail or errored), written in the
-- transaction that judged the version. A version judged without a row
-- passed every rule; policy_digest on agents says which policy judged the
-- current version ('' none), so the two are told apart.
CREATE TABLE policy_results (
    agent_pk     BIGINT  NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    rule_id      TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    outcome      TEXT    NOT NULL,
    message      TEXT    NOT NULL,
    evaluated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (agent_pk, version, rule_id)
);
-- policy_failing is the sorted JSON array of the rule ids failing (or
-- errored) on the current version: the policy search facet. policy_refused
-- is the rule that refused the last card a crawl brought ('' none): the
-- agent keeps its last compliant version and is stale until its card
-- complies.
ALTER TABLE agents ADD COLUMN policy_failing TEXT NOT NULL DEFAULT '[]';
ALTER TABLE agents ADD COLUMN policy_refused TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN policy_digest TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agents DROP COLUMN policy_digest;
ALTER TABLE agents DROP COLUMN policy_refused;
ALTER TABLE agents DROP COLUMN policy_failing;
DROP TABLE policy_results;
