-- +goose Up
-- No schema change. The card parser now derives what older releases got
-- wrong: a security requirement naming an undeclared scheme (or a v0.1
-- scheme such as x402) is not anonymous access, an interface whose URL is a
-- template placeholder is no interface, and a protocolVersion that is no A2A
-- version is not used. Once this is applied, Migrate re-derives every
-- agent's indexed view from its stored card (catalog rederive), so existing
-- agents search as new ones do.
SELECT 1;

-- +goose Down
SELECT 1;
