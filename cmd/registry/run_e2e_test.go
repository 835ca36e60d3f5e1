package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// TestRunThroughServe registers an a2asrv agent with `serve` and runs a
// streamed test task against it through the API, as a tester would.
func TestRunThroughServe(t *testing.T) {
	pe := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	site := httptest.NewServer(a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{
		Name: "Echo", Description: "Says it back.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{URL: pe.Interface.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Echo.", Tags: []string{"echo"}}},
	}))
	defer site.Close()

	base := startServe(t, "sqlite:"+filepath.Join(t.TempDir(), "reg.db"))
	resp, err := http.Post(base+"/api/v1/agents", "application/json", strings.NewReader(`{"url":"`+site.URL+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var agent struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&agent)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("registering: %d %v", resp.StatusCode, err)
	}

	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/agents/"+agent.ID+"/runs",
		strings.NewReader(`{"message": {"role": "user", "parts": [{"text": "over the wire"}]}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var names []string
	var done string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
			names = append(names, name)
		case strings.HasPrefix(line, "data: ") && name == "done":
			done = strings.TrimPrefix(line, "data: ")
		}
	}
	if len(names) < 3 || names[0] != "run" || names[len(names)-1] != "done" {
		t.Fatalf("events %v", names)
	}
	var run struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(done), &run); err != nil || run.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("done: %v %s", err, done)
	}
	resp, err = http.Get(base + "/api/v1/runs/" + run.ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "over the wire") {
		t.Errorf("stored run: %d %s", resp.StatusCode, body)
	}
}
