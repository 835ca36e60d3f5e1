-- +goose Up
-- Search's semantic layer: each agent's text embedded by one model at one
-- dimension, as little-endian float32 (4 bytes a dimension). text_sha256
-- is the digest of the text embedded (search.EmbedText), so a vector of
-- an older text is known as such; a vector is only ever compared with
-- vectors of the same model and dimension.
CREATE TABLE agent_embeddings (
    agent_pk    INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    model       TEXT    NOT NULL,
    dimension   INTEGER NOT NULL,
    text_sha256 TEXT    NOT NULL,
    vector      BLOB    NOT NULL,
    embedded_at DATETIME NOT NULL,
    PRIMARY KEY (agent_pk, model, dimension)
);

-- +goose Down
DROP TABLE agent_embeddings;
