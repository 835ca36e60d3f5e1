package policy

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// Decoding the published card into a google.protobuf.Struct for every
// agent judged cost more than evaluating twenty rules (protojson, about
// 0.4 ms for a synthetic card). So `agent.card` is served by a field
// accessor of its own: the type checker sees the field as declared
// (map(string, dyn)); at run time the card's bytes are decoded once, with
// encoding/json, the first time a rule reads the field, and the map is
// handed to CEL as is, its values adapted as rules reach them.

// cardField wraps the environment's type provider so that `card` of
// policy.Agent is read through cardValue.
func cardField() cel.EnvOption {
	return func(e *cel.Env) (*cel.Env, error) {
		return cel.CustomTypeProvider(cardProvider{Provider: e.CELTypeProvider(), adapter: e.CELTypeAdapter()})(e)
	}
}

type cardProvider struct {
	types.Provider
	adapter types.Adapter
}

func (p cardProvider) FindStructFieldType(structType, fieldName string) (*types.FieldType, bool) {
	ft, ok := p.Provider.FindStructFieldType(structType, fieldName)
	if !ok || structType != "policy.Agent" || fieldName != "card" {
		return ft, ok
	}
	return &types.FieldType{
		Type: ft.Type,
		IsSet: func(obj any) bool {
			a, ok := obj.(*Agent)
			return ok && (a.Card != nil || len(a.raw) > 0)
		},
		GetFrom: func(obj any) (any, error) {
			a, ok := obj.(*Agent)
			if !ok {
				return nil, fmt.Errorf("policy: agent of type %T", obj)
			}
			return a.cardValue(p.adapter)
		},
	}, true
}

var errNoCard = errors.New("the agent has no published card")

// cardValue is `agent.card` as CEL reads it: Card when set, else the
// card's bytes decoded once.
func (a *Agent) cardValue(adapter types.Adapter) (any, error) {
	if a.Card != nil {
		return a.Card, nil
	}
	if a.published == nil {
		if len(a.raw) == 0 {
			return nil, errNoCard
		}
		if err := json.Unmarshal(a.raw, &a.published); err != nil {
			return nil, fmt.Errorf("policy: reading the published card: %w", err)
		}
	}
	return types.NewStringInterfaceMap(adapter, a.published), nil
}
