package main

import (
	"fmt"
	"log/slog"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
)

// newAuthenticator builds sign-in from the configuration: OIDC when an
// issuer is set, development mode (the local user is admin) otherwise.
func newAuthenticator(cfg config.Config, store *catalog.Store, log *slog.Logger) (*auth.Authenticator, error) {
	if !cfg.SignIn() {
		return auth.New(auth.Config{PublicURL: cfg.Server.PublicURL, Logger: log})
	}
	secret, err := cfg.Auth.Secret()
	if err != nil {
		return nil, err
	}
	ac := auth.Config{
		Issuer:       cfg.Auth.Issuer,
		ClientID:     cfg.Auth.ClientID,
		ClientSecret: secret.Reveal(),
		Scopes:       cfg.Auth.Scopes,
		PublicURL:    cfg.Server.PublicURL,
		RolesClaim:   cfg.Auth.RolesClaim,
		GroupsClaim:  cfg.Auth.GroupsClaim,
		APIAudience:  cfg.Auth.APIAudience,
		SessionIdle:  cfg.Auth.SessionIdle,
		SessionMax:   cfg.Auth.SessionMax,
		Sessions:     store,
		Logger:       log,
	}
	for _, rc := range cfg.Auth.Roles {
		r, err := auth.ParseRole(rc.Role)
		if err != nil {
			return nil, fmt.Errorf("oidc-role: %w", err)
		}
		ac.Roles = append(ac.Roles, auth.RoleMapping{Role: r, Value: rc.Value})
	}
	if ac.DefaultRole, err = optionalRole(cfg.Auth.DefaultRole); err != nil {
		return nil, fmt.Errorf("oidc-default-role: %w", err)
	}
	if ac.AnonymousRole, err = optionalRole(cfg.Auth.AnonymousRole); err != nil {
		return nil, fmt.Errorf("anonymous-role: %w", err)
	}
	return auth.New(ac)
}

// optionalRole reads a role name or config.RoleNone (the zero Role).
func optionalRole(name string) (auth.Role, error) {
	if name == config.RoleNone {
		return 0, nil
	}
	return auth.ParseRole(name)
}
