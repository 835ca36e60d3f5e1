-- +goose Up
-- The verifier's first query picks never-verified agents in pk order. A
-- partial index holding only them lets the planner read those few rows
-- instead of walking agents by primary key past every verified one (on
-- PostgreSQL, with statistics taken while every agent was unchecked, the
-- composite agents_signature_status index was passed over).
CREATE INDEX agents_unchecked ON agents (pk) WHERE signature_status = 'unchecked';

-- +goose Down
DROP INDEX agents_unchecked;
