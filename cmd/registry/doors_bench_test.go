package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/a2aagent"
	"github.com/a2aregistry/registry/internal/mcpserver"
)

// BenchmarkDoorSearchOverhead asks the same questions through the JSON
// API (GET /api/v1/agents?q=…&limit=10), MCP's search_agents (one
// session, tools/call) and the A2A agent's SendMessage (JSON-RPC), in
// process over one catalog of 100,000 agents (REGISTRY_ARD_BENCH_AGENTS
// sets another size), each door first in turn, and reports each one's
// p50 and what MCP and A2A add to the JSON API's (issue 25 asks < 2 ms).
// It also reports each door's CPU time per call (the process's, which
// the machine's load does not stretch as it does wall time).
// It is the in-process companion of `registry-bench openloop -kinds
// api,mcp,a2a`, for profiling (-cpuprofile).
func BenchmarkDoorSearchOverhead(b *testing.B) {
	store := benchStore(b, benchAgents)
	h := newHandler(handlerDeps{log: slog.New(slog.DiscardHandler), store: store, agents: store,
		doors: doorDeps{mcp: store, agent: store}})
	questions := []string{"find me an agent that books hotels near the office", "summarise a legal contract in plain english",
		"which agent can extract totals from a pdf invoice", "translate my word documents into german and french",
		"help me triage customer support tickets by urgency", "write unit tests for my python code",
		"track a parcel and tell me when it arrives", "scan receipts from photos into expense entries"}
	do := func(req *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusAccepted {
			b.Fatalf("%s %s: %d %s", req.Method, req.URL, rec.Code, rec.Body)
		}
		if body := rec.Body.String(); strings.Contains(body, `"isError":true`) || strings.Contains(body, `"error":{`) {
			b.Fatalf("%s %s: %.300s", req.Method, req.URL, body)
		}
		return rec
	}
	mcpPost := func(session, body string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, mcpserver.Path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		return req
	}
	rec := do(mcpPost("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`))
	session := rec.Header().Get("Mcp-Session-Id")
	do(mcpPost(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	doors := []string{"api", "mcp", "a2a"}
	lat := map[string][]time.Duration{}
	// CPU time per request, the process's: on a loaded machine a door
	// whose request hops between goroutines waits for the OS to run each
	// one, so its wall-clock time says more about the machine than CPU
	// does.
	cpu := map[string]time.Duration{}
	cpuNow := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	send := func(door, q string, id int) {
		var req *http.Request
		switch door {
		case "api":
			req = httptest.NewRequest(http.MethodGet, "/api/v1/agents?"+url.Values{"q": {q}, "limit": {"10"}}.Encode(), nil)
		case "mcp":
			args, _ := json.Marshal(map[string]any{"query": q, "limit": 10})
			req = mcpPost(session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`,
				id, mcpserver.ToolSearch, args))
		case "a2a":
			params, _ := json.Marshal(&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(q))})
			req = httptest.NewRequest(http.MethodPost, a2aagent.JSONRPCPath,
				strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":%s}`, id, params)))
			req.Header.Set("Content-Type", "application/json")
		}
		c, t := cpuNow(), time.Now()
		do(req)
		lat[door] = append(lat[door], time.Since(t))
		cpu[door] += cpuNow() - c
	}
	i := 0
	for b.Loop() {
		q := questions[i%len(questions)]
		// Each door goes first a third of the time: the first of a turn
		// finds the page's summaries uncached.
		for j := range doors {
			send(doors[(i+j)%len(doors)], q, i+1)
		}
		i++
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	api, mcp, agent := p50(lat["api"]), p50(lat["mcp"]), p50(lat["a2a"])
	b.ReportMetric(api, "api-p50-ms")
	b.ReportMetric(mcp, "mcp-p50-ms")
	b.ReportMetric(agent, "a2a-p50-ms")
	b.ReportMetric(mcp-api, "mcp-added-p50-ms")
	b.ReportMetric(agent-api, "a2a-added-p50-ms")
	perCall := func(door string) float64 { return float64(cpu[door].Microseconds()) / 1000 / float64(len(lat[door])) }
	b.ReportMetric(perCall("api"), "api-cpu-ms")
	b.ReportMetric(perCall("mcp"), "mcp-cpu-ms")
	b.ReportMetric(perCall("a2a"), "a2a-cpu-ms")
}
