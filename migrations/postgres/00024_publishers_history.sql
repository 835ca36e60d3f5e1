-- +goose Up
-- Whether the agent's publisher (the registrable domain of its card URL)
-- proved it holds the key that signs the current card: the
-- publisher_verified search facet, set with the verification report of
-- the current version ('true' or 'false'; a new version is 'false' until
-- it is verified).
ALTER TABLE agents ADD COLUMN publisher_verified TEXT NOT NULL DEFAULT 'false';

-- The daily history of the fleet security report: one row per UTC day and
-- scope ('all': every agent; 'public': what any signed-in viewer sees),
-- the report's headline numbers as they stood when the row was written.
-- The primary key makes a day's row written once, by whichever replica
-- comes first.
CREATE TABLE security_history (
    day TEXT NOT NULL,
    scope TEXT NOT NULL,
    taken_at TIMESTAMPTZ NOT NULL,
    agents INTEGER NOT NULL,
    signature_verified INTEGER NOT NULL,
    signature_invalid INTEGER NOT NULL,
    unsigned INTEGER NOT NULL,
    key_unavailable INTEGER NOT NULL,
    unchecked INTEGER NOT NULL,
    anonymous INTEGER NOT NULL,
    key_changes INTEGER NOT NULL,
    publisher_verified INTEGER NOT NULL,
    PRIMARY KEY (day, scope)
);

-- +goose Down
DROP TABLE security_history;
ALTER TABLE agents DROP COLUMN publisher_verified;
