-- +goose Up
-- Random keys the registry makes for itself and every replica shares,
-- such as the one that authenticates ARD page tokens: a token one replica
-- hands out must hold on another, and after a restart. Hex-encoded.
CREATE TABLE registry_secrets (
    name TEXT PRIMARY KEY,
    value_hex TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE registry_secrets;
