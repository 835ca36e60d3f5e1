// Package deploy_test checks the deployment files without a Docker engine
// or a cluster: the image's build step is run as it is written, and the
// compose file and the Kubernetes manifests are checked for what the
// registry needs, down to the settings it would load from them.
package deploy_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/a2aregistry/registry/internal/config"
)

// TestDockerfile runs the image's build step (deploy/build.sh, which the
// Dockerfile's RUN line calls) and checks the image runs as non-root with a
// HEALTHCHECK the built binary understands.
func TestDockerfile(t *testing.T) {
	raw, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines so each instruction is one line.
	text := strings.ReplaceAll(string(raw), "\\\n", " ")
	var runs, users, health []string
	stages := 0
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		kw, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(kw) {
		case "FROM":
			stages++
			users = nil // USER applies per stage; the last stage's counts
		case "RUN":
			runs = append(runs, rest)
		case "USER":
			users = append(users, strings.TrimSpace(rest))
		case "HEALTHCHECK":
			health = append(health, rest)
		}
	}
	if !slices.ContainsFunc(runs, func(r string) bool { return strings.Contains(r, "sh deploy/build.sh /out/registry") }) {
		t.Fatalf("no RUN line builds with deploy/build.sh: %q", runs)
	}
	if stages < 2 {
		t.Errorf("%d stages: want a build stage and a small runtime stage", stages)
	}
	if len(users) == 0 || slices.ContainsFunc(users, func(u string) bool {
		name, _, _ := strings.Cut(u, ":")
		return name == "0" || name == "root"
	}) {
		t.Errorf("runtime stage USER %q: want a non-root user", users)
	}
	if len(health) != 1 || !regexp.MustCompile(`CMD \["registry", "healthcheck"`).MatchString(health[0]) {
		t.Fatalf("HEALTHCHECK %q: want CMD [\"registry\", \"healthcheck\"…]", health)
	}

	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "registry")
	build := exec.Command("sh", "deploy/build.sh", bin)
	build.Dir = ".."
	build.Env = append(os.Environ(), "VERSION=deploy-test")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("deploy/build.sh: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !bytes.Contains(out, []byte("deploy-test")) {
		t.Fatalf("built binary's version = %q, %v; want the VERSION passed", out, err)
	}
	// The healthcheck exists and fails (exit 1, not a usage error) when
	// nothing serves.
	err = exec.Command(bin, "healthcheck", "--listen", "127.0.0.1:1", "--timeout", "1s").Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("healthcheck with nothing listening: %v; want exit status 1", err)
	}
}

// loadSettings is what the registry's serve command would make of env: it
// must be a configuration it accepts.
func loadSettings(t *testing.T, where string, env map[string]string) config.Config {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg, err := config.Load(fs, config.All, nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("%s: the registry refuses these settings: %v", where, err)
	}
	return cfg
}

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       map[string]string `yaml:"build"`
		NetworkMode string            `yaml:"network_mode"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
}

type dexConfig struct {
	Issuer        string `yaml:"issuer"`
	StaticClients []struct {
		ID           string   `yaml:"id"`
		SecretEnv    string   `yaml:"secretEnv"`
		RedirectURIs []string `yaml:"redirectURIs"`
	} `yaml:"staticClients"`
}

// expand resolves compose's ${VAR:-default} with the defaults.
func expand(s string) string {
	return regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`).ReplaceAllString(s, "$1")
}

// TestCompose checks deploy/compose.yaml: two registries on PostgreSQL
// signing in at Dex, each with settings the registry accepts, a redirect
// URL Dex knows, and a lease name of its own. With docker compose (or
// docker-compose) installed, it also validates the file with it.
func TestCompose(t *testing.T) {
	for _, tool := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		// The docker client without its compose plugin has no such command.
		if err := exec.Command(tool[0], append(tool[1:], "version")...).Run(); err != nil {
			continue
		}
		cmd := exec.Command(tool[0], append(tool[1:], "-f", "compose.yaml", "config", "-q")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s config: %v\n%s", strings.Join(tool, " "), err, out)
		}
		t.Logf("validated with %s", strings.Join(tool, " "))
		break
	}

	// The dex/config.yaml the compose file mounts.
	rawDex, err := os.ReadFile("dex/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var dex dexConfig
	if err := yaml.Unmarshal(rawDex, &dex); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"postgres", "dex"} {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("no %s service", name)
		}
	}
	instances := map[string]bool{}
	registries := 0
	for name, s := range c.Services {
		if !strings.HasPrefix(name, "registry") {
			continue
		}
		registries++
		if s.Build["context"] != ".." || s.Build["dockerfile"] != "Dockerfile" {
			t.Errorf("%s: build %v; want the repository's Dockerfile", name, s.Build)
		}
		if s.DependsOn["postgres"].Condition != "service_healthy" {
			t.Errorf("%s: does not wait for a healthy PostgreSQL", name)
		}
		env := map[string]string{}
		for k, v := range s.Environment {
			env[k] = expand(v)
		}
		cfg := loadSettings(t, name, env)
		if !strings.HasPrefix(cfg.Storage.DB, "postgres://") || !strings.Contains(cfg.Storage.DB, "@postgres:5432/") {
			t.Errorf("%s: REGISTRY_DB %q is not the compose PostgreSQL", name, cfg.Storage.DB)
		}
		if cfg.Auth.Issuer != dex.Issuer {
			t.Errorf("%s: issuer %q, Dex says %q", name, cfg.Auth.Issuer, dex.Issuer)
		}
		if len(dex.StaticClients) != 1 || dex.StaticClients[0].ID != cfg.Auth.ClientID ||
			!slices.Contains(dex.StaticClients[0].RedirectURIs, cfg.Server.PublicURL+"/auth/callback") {
			t.Errorf("%s: Dex has no client %q with redirect %s/auth/callback", name, cfg.Auth.ClientID, cfg.Server.PublicURL)
		}
		if cfg.Auth.ClientSecret.Reveal() != expand(c.Services["dex"].Environment[dex.StaticClients[0].SecretEnv]) {
			t.Errorf("%s: client secret differs from Dex's", name)
		}
		if cfg.Crawl.Instance == "" || instances[cfg.Crawl.Instance] {
			t.Errorf("%s: instance %q: want a lease name of its own", name, cfg.Crawl.Instance)
		}
		instances[cfg.Crawl.Instance] = true
		_, port, _ := strings.Cut(cfg.Server.Listen, ":")
		if !slices.Contains(c.Services["dex"].Ports, "127.0.0.1:"+port+":"+port) {
			t.Errorf("%s: listen port %s not published", name, port)
		}
		if want := []string{"CMD", "registry", "healthcheck", "--listen", "127.0.0.1:" + port}; !slices.Equal(s.Healthcheck.Test, want) {
			t.Errorf("%s: healthcheck %q; want %q", name, s.Healthcheck.Test, want)
		}
	}
	if registries != 2 {
		t.Errorf("%d registry services; want 2", registries)
	}
}

// k8sObject is the part of a manifest the checks read.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Replicas int              `yaml:"replicas"`
		Selector yaml.Node        `yaml:"selector"`
		Ports    []map[string]any `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
				} `yaml:"securityContext"`
				Containers []k8sContainer `yaml:"containers"`
				Volumes    []struct {
					Secret struct {
						SecretName string `yaml:"secretName"`
						Items      []struct {
							Key, Path string
						} `yaml:"items"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Env []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom struct {
			SecretKeyRef struct{ Name, Key string } `yaml:"secretKeyRef"`
			FieldRef     struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	ReadinessProbe k8sProbe `yaml:"readinessProbe"`
	LivenessProbe  k8sProbe `yaml:"livenessProbe"`
	Ports          []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

// TestKubernetes checks deploy/kubernetes/: a Deployment of several
// replicas probing /readyz and /healthz, taking the DSN and the OIDC
// client secret from the Secret, with settings the registry accepts, and a
// Service selecting its pods.
func TestKubernetes(t *testing.T) {
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	byKind := map[string][]k8sObject{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var o k8sObject
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			byKind[o.Kind] = append(byKind[o.Kind], o)
		}
	}
	if len(byKind["Deployment"]) != 1 || len(byKind["Service"]) != 1 || len(byKind["Secret"]) != 1 {
		t.Fatalf("kinds %v: want one Deployment, Service and Secret", byKind)
	}
	dep, svc, sec := byKind["Deployment"][0], byKind["Service"][0], byKind["Secret"][0]
	if dep.Spec.Replicas < 2 {
		t.Errorf("%d replicas; want several", dep.Spec.Replicas)
	}
	if !dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot {
		t.Error("pods may run as root")
	}
	var sel struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	if err := dep.Spec.Selector.Decode(&sel); err != nil {
		t.Fatal(err)
	}
	var svcSel map[string]string
	if err := svc.Spec.Selector.Decode(&svcSel); err != nil {
		t.Fatal(err)
	}
	for _, s := range []map[string]string{sel.MatchLabels, svcSel} {
		for k, v := range s {
			if dep.Spec.Template.Metadata.Labels[k] != v {
				t.Errorf("selector %s=%s does not match the pod labels %v", k, v, dep.Spec.Template.Metadata.Labels)
			}
		}
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes: readiness %q, liveness %q; want /readyz and /healthz", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}

	// The settings the pod would start with; secrets as the kubelet
	// would give them.
	secretFiles := map[string]string{} // mounted path → secret key
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Secret.SecretName != sec.Metadata.Name {
			continue
		}
		for _, it := range v.Secret.Items {
			secretFiles[it.Path] = it.Key
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom.SecretKeyRef.Key != "":
			ref := e.ValueFrom.SecretKeyRef
			v, ok := sec.StringData[ref.Key]
			if ref.Name != sec.Metadata.Name || !ok {
				t.Errorf("%s: secret %s/%s not in the Secret", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = v
		case e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = "a2a-registry-7d9f-abcde"
		default:
			env[e.Name] = e.Value
		}
	}
	// The client secret file is mounted from the Secret: point the check
	// at a copy of its value.
	if p := env["REGISTRY_OIDC_CLIENT_SECRET_FILE"]; p != "" {
		key, ok := secretFiles[filepath.Base(p)]
		if !ok {
			t.Fatalf("REGISTRY_OIDC_CLIENT_SECRET_FILE %s is not mounted from the Secret", p)
		}
		local := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(local, []byte(sec.StringData[key]), 0o600); err != nil {
			t.Fatal(err)
		}
		env["REGISTRY_OIDC_CLIENT_SECRET_FILE"] = local
	}
	cfg := loadSettings(t, "Deployment", env)
	if !strings.HasPrefix(cfg.Storage.DB, "postgres://") || !cfg.SignIn() {
		t.Errorf("Deployment: db %q, sign-in %v; want PostgreSQL and OIDC", cfg.Storage.DB, cfg.SignIn())
	}
	if _, err := cfg.Auth.Secret(); err != nil {
		t.Errorf("Deployment: client secret: %v", err)
	}
	_, port, _ := strings.Cut(cfg.Server.Listen, ":")
	if len(c.Ports) != 1 || c.Ports[0].Name != c.ReadinessProbe.HTTPGet.Port || c.Ports[0].Name != c.LivenessProbe.HTTPGet.Port ||
		port != "8080" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports %+v, listen %s: probes must reach the listen port", c.Ports, cfg.Server.Listen)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0]["targetPort"] != c.Ports[0].Name {
		t.Errorf("Service ports %v do not target the container port %q", svc.Spec.Ports, c.Ports[0].Name)
	}
}
