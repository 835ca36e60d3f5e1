-- +goose Up
-- The security report's daily history keeps what the report shows beside
-- its signature counts: agents with findings of each severity (error,
-- warning, info; an agent with several is counted under each), agents
-- declaring an interface over plain http, and agents whose card changed
-- signing key within the last 30 days. Days recorded before hold 0.
ALTER TABLE security_history ADD COLUMN findings_error INTEGER NOT NULL DEFAULT 0;
ALTER TABLE security_history ADD COLUMN findings_warning INTEGER NOT NULL DEFAULT 0;
ALTER TABLE security_history ADD COLUMN findings_info INTEGER NOT NULL DEFAULT 0;
ALTER TABLE security_history ADD COLUMN plain_http INTEGER NOT NULL DEFAULT 0;
ALTER TABLE security_history ADD COLUMN key_changes_30d INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE security_history DROP COLUMN key_changes_30d;
ALTER TABLE security_history DROP COLUMN plain_http;
ALTER TABLE security_history DROP COLUMN findings_info;
ALTER TABLE security_history DROP COLUMN findings_warning;
ALTER TABLE security_history DROP COLUMN findings_error;
