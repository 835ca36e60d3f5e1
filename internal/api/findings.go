package api

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/report"
)

// Formats of GET /reports/security/findings.
const (
	findingsCSV   = "csv"
	findingsJSON  = "json"
	findingsSARIF = "sarif"
)

// ExportedFinding is one element of GET /reports/security/findings?format=json.
type ExportedFinding struct {
	AgentID  string `json:"agent_id"`
	URN      string `json:"urn,omitempty"`
	Name     string `json:"name"`
	CardURL  string `json:"card_url"`
	Source   string `json:"source"`
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Message  string `json:"message"`
}

func newExportedFinding(f report.Finding) ExportedFinding {
	return ExportedFinding{AgentID: f.AgentID, URN: f.URN, Name: f.Name, CardURL: f.CardURL, Source: f.Source,
		Code: f.Code, Severity: string(f.Severity), Path: f.Path, Message: f.Message}
}

// findingsColumns is the CSV header row, in ExportedFinding's order.
var findingsColumns = []string{"agent_id", "urn", "name", "card_url", "source", "code", "severity", "path", "message"}

// sarifSchema is the SARIF 2.1.0 schema (OASIS SARIF v2.1.0 §3.13.3).
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	// sarifInformationURI is the tool's documentation.
	sarifInformationURI = "https://github.com/a2aregistry/registry/blob/main/docs/api.md#security-report"
)

// securityFindings serves GET /reports/security/findings: every current
// finding of the agents the caller sees, streamed as CSV, a JSON array or
// SARIF 2.1.0. Role viewer, as the report whose numbers it itemises; the
// catalog applies the caller's scope. The format is checked before the
// first byte, so only a fault of the registry mid-stream can cut a body
// short (it is logged; the status is already sent).
func (a *API) securityFindings(r report.CardReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		format := c.QueryParam("format")
		if format == "" {
			format = findingsJSON
		}
		var (
			ctype string
			start func(w *bufio.Writer) (write func(report.Finding) error, end func() error)
		)
		switch format {
		case findingsCSV:
			// RFC 4180 §3 registers text/csv with its header parameter.
			ctype, start = "text/csv; charset=utf-8; header=present", startCSV
		case findingsJSON:
			ctype, start = echo.MIMEApplicationJSON, startJSON
		case findingsSARIF:
			ctype, start = "application/sarif+json", startSARIF
		default:
			return invalidParameter("format", "format must be csv, json or sarif, not %q", format)
		}
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, ctype)
		h.Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="security-findings.%s"`, format))
		c.Response().WriteHeader(http.StatusOK)
		w := bufio.NewWriter(c.Response())
		write, end := start(w)
		if err := report.Findings(c.Request().Context(), r, a.scope(c), write); err != nil {
			return fmt.Errorf("streaming findings: %w", err)
		}
		if err := end(); err != nil {
			return fmt.Errorf("streaming findings: %w", err)
		}
		return w.Flush()
	}
}

// startCSV writes RFC 4180 records under a header row. Card text is
// untrusted, so a cell a spreadsheet would read as a formula is defused.
func startCSV(w *bufio.Writer) (func(report.Finding) error, func() error) {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true // RFC 4180 §2.1: records end in CRLF
	header := false
	writeHeader := func() error {
		if header {
			return nil
		}
		header = true
		return cw.Write(findingsColumns)
	}
	write := func(f report.Finding) error {
		if err := writeHeader(); err != nil {
			return err
		}
		rec := []string{f.AgentID, f.URN, f.Name, f.CardURL, f.Source, f.Code, string(f.Severity), f.Path, f.Message}
		for i, v := range rec {
			rec[i] = defuseFormula(v)
		}
		return cw.Write(rec)
	}
	end := func() error {
		if err := writeHeader(); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	}
	return write, end
}

// defuseFormula prefixes an apostrophe to a cell a spreadsheet would
// evaluate: one starting with = + - @, a tab or a carriage return (OWASP,
// CSV injection). The apostrophe makes the cell text and is not shown.
func defuseFormula(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// startJSON writes one JSON array, element by element: a single document
// any JSON reader takes whole.
func startJSON(w *bufio.Writer) (func(report.Finding) error, func() error) {
	enc := json.NewEncoder(w)
	n := 0
	// A bufio.Writer keeps its first error for Flush, so the writes of
	// punctuation below need no check of their own.
	w.WriteString("[")
	write := func(f report.Finding) error {
		if n > 0 {
			w.WriteString(",")
		}
		n++
		return enc.Encode(newExportedFinding(f))
	}
	end := func() error {
		_, err := w.WriteString("]\n")
		return err
	}
	return write, end
}

// SARIF 2.1.0 objects the export writes (OASIS SARIF v2.1.0 §3).
type (
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifRule struct {
		ID               string       `json:"id"`
		ShortDescription sarifMessage `json:"shortDescription"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifLogicalLocation struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
		Kind               string `json:"kind"`
	}
	sarifArtifactLocation struct {
		URI string `json:"uri"`
	}
	sarifPhysicalLocation struct {
		ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	}
	sarifLocation struct {
		PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
		LogicalLocations []sarifLogicalLocation `json:"logicalLocations"`
	}
	sarifResult struct {
		RuleID     string          `json:"ruleId"`
		RuleIndex  int             `json:"ruleIndex"`
		Level      string          `json:"level"`
		Message    sarifMessage    `json:"message"`
		Locations  []sarifLocation `json:"locations"`
		Properties map[string]any  `json:"properties"`
	}
)

// startSARIF writes a SARIF 2.1.0 log of one run. The results stream
// first and the tool, whose rules are the codes met, follows them: JSON
// members are unordered (RFC 8259 §4), so a reader sees the same log as
// if the tool came first, and the export need not hold the findings.
func startSARIF(w *bufio.Writer) (func(report.Finding) error, func() error) {
	enc := json.NewEncoder(w)
	var (
		rules []sarifRule
		index = map[string]int{}
		n     int
	)
	fmt.Fprintf(w, `{"version":%q,"$schema":%q,"runs":[{"results":[`, sarifVersion, sarifSchema)
	write := func(f report.Finding) error {
		// Codes are unique within a source, not across them.
		id := f.Source + "/" + f.Code
		i, ok := index[id]
		if !ok {
			i = len(rules)
			index[id] = i
			rules = append(rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: fmt.Sprintf("%s finding %s", f.Source, f.Code)}})
		}
		loc := sarifLocation{LogicalLocations: []sarifLogicalLocation{{Name: f.AgentID, FullyQualifiedName: f.URN, Kind: "object"}}}
		if u, err := url.Parse(f.CardURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
			loc.PhysicalLocation = &sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{URI: f.CardURL}}
		}
		if n > 0 {
			w.WriteString(",") // its error, if any, comes back at Flush
		}
		n++
		return enc.Encode(sarifResult{RuleID: id, RuleIndex: i, Level: sarifLevel(f.Severity), Message: sarifMessage{Text: f.Message},
			Locations:  []sarifLocation{loc},
			Properties: map[string]any{"agentName": f.Name, "jsonPath": f.Path, "source": f.Source, "severity": string(f.Severity)}})
	}
	end := func() error {
		if rules == nil {
			rules = []sarifRule{}
		}
		w.WriteString(`],"tool":`)
		if err := enc.Encode(sarifTool{Driver: sarifDriver{Name: "a2aregistry", InformationURI: sarifInformationURI, Rules: rules}}); err != nil {
			return err
		}
		_, err := w.WriteString("}]}\n")
		return err
	}
	return write, end
}

// sarifLevel maps a severity to a SARIF result level (§3.27.10).
func sarifLevel(s card.Severity) string {
	switch s {
	case card.SeverityError:
		return "error"
	case card.SeverityWarning:
		return "warning"
	}
	return "note"
}
