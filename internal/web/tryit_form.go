package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/web/view"
)

// What the "Try it" forms send: the message's parts, the interface and
// the credentials, read into what the proxy takes.

// Form fields of the compose and reply forms.
const (
	fieldText         = "text"
	fieldData         = "data"
	fieldFile         = "file"
	fieldInterface    = "interface"
	fieldSpeak        = "protocol_version"
	fieldBlocking     = "blocking"
	fieldBearer       = "cred_bearer"
	fieldAPIKey       = "cred_api_key"
	fieldBasicUser    = "cred_basic_username"
	fieldBasicPass    = "cred_basic_password"
	fieldClientID     = "cred_client_id"
	fieldClientSecret = "cred_client_secret"
	fieldScopes       = "cred_scopes"
)

// composed builds the user message from the form: a text part, a JSON
// data part, a file part, each optional but not all absent.
func (h *Console) composed(c echo.Context) (*a2a.Message, error) {
	msg := a2a.NewMessage(a2a.MessageRoleUser)
	if t := c.FormValue(fieldText); t != "" {
		msg.Parts = append(msg.Parts, a2a.NewTextPart(t))
	}
	if d := strings.TrimSpace(c.FormValue(fieldData)); d != "" {
		var v any
		// Numbers stay as written: float64 would round large integers.
		dec := json.NewDecoder(strings.NewReader(d))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("the data part is not JSON: %w", err)
		}
		if dec.More() {
			return nil, errors.New("the data part holds more than one JSON value")
		}
		msg.Parts = append(msg.Parts, a2a.NewDataPart(v))
	}
	fh, err := c.FormFile(fieldFile)
	if err == nil && fh.Size > 0 {
		_, _, maxFile := h.opts.Runs.Limits()
		if fh.Size > maxFile {
			return nil, fmt.Errorf("the file is larger than %d bytes", maxFile)
		}
		f, err := fh.Open()
		if err != nil {
			return nil, fmt.Errorf("reading the file: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
		if err != nil {
			return nil, fmt.Errorf("reading the file: %w", err)
		}
		p := a2a.NewRawPart(b)
		p.Filename = fh.Filename
		p.MediaType = fh.Header.Get(echo.HeaderContentType)
		if p.MediaType == "" {
			p.MediaType = "application/octet-stream"
		}
		msg.Parts = append(msg.Parts, p)
	}
	if len(msg.Parts) == 0 {
		return nil, errors.New("the message is empty: write text, data or attach a file")
	}
	return msg, nil
}

// chosenInterface maps the form's pick (an index into the card's
// interfaces, or empty for "any") onto a proxy choice. speak is the
// version to speak where the card declares none; the proxy never guesses
// it.
func chosenInterface(cd *card.Card, v, speak string) (proxy.Choice, error) {
	if speak != "" && speak != "1.0" && speak != "0.3" {
		return proxy.Choice{}, errors.New("the protocol version to speak is 1.0 or 0.3")
	}
	if v == "" {
		return proxy.Choice{SpeakVersion: speak}, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || i >= len(cd.Interfaces) {
		return proxy.Choice{}, errors.New("pick one of the interfaces the card declares")
	}
	in := cd.Interfaces[i]
	return proxy.Choice{URL: in.URL, Binding: in.Binding, Version: in.ProtocolVersion, SpeakVersion: speak}, nil
}

// formCredentials reads the credential inputs; the proxy refuses more
// than one kind. Only what the tester typed (or an OAuth sign-in to the
// agent's own server gave) is sent: never a token of the registry's own
// sign-in, which a card could claim by naming the registry's provider and
// which could then act as the tester (docs/security.md, "Test runs").
func (h *Console) formCredentials(c echo.Context) proxy.Credentials {
	cr := proxy.Credentials{Bearer: c.FormValue(fieldBearer), APIKey: c.FormValue(fieldAPIKey)}
	if u, p := c.FormValue(fieldBasicUser), c.FormValue(fieldBasicPass); u != "" || p != "" {
		cr.Basic = &proxy.Basic{Username: u, Password: p}
	}
	if id, s := c.FormValue(fieldClientID), c.FormValue(fieldClientSecret); id != "" || s != "" {
		cr.OAuth2ClientCredentials = &proxy.ClientCredentials{ClientID: id, ClientSecret: s, Scopes: strings.Fields(c.FormValue(fieldScopes))}
	}
	return cr
}

// credentialForm offers the inputs the card's schemes can use: bearer for
// http bearer, OpenID Connect and OAuth 2.0 (a token the tester already
// has), an API key, HTTP Basic, and the client credentials grant where a
// flow declares it.
func credentialForm(cd *card.Card) view.CredentialForm {
	var f view.CredentialForm
	for _, s := range cd.SecuritySchemes {
		f.Schemes = append(f.Schemes, s.Name+" ("+s.Type+")")
		switch strings.ToLower(s.Type) {
		case "apikey":
			f.APIKey = true
		case "http":
			if strings.EqualFold(s.Scheme, "basic") {
				f.Basic = true
			} else {
				f.Bearer = true
			}
		case "openidconnect":
			f.Bearer = true
		case "oauth2":
			f.Bearer = true
			if slices.ContainsFunc(s.Flows, func(fl card.OAuthFlow) bool { return fl.Name == "clientCredentials" }) {
				f.ClientCredentials = true
			}
		}
	}
	return f
}
