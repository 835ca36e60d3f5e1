package ard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// maxBodyBytes bounds a search or explore body: a query of 500 characters
// and 20 filter keys of 20 values fit many times over.
const maxBodyBytes = 64 << 10

// queryModel is ARD's shared query (spec/ard.md §7.1).
type queryModel struct {
	Text   *string                 `json:"text"`
	Filter map[string]filterValues `json:"filter"`
}

// filterValues is a filter value: an array of strings, or a bare string as
// a one-element array (§7.1).
type filterValues []string

func (f *filterValues) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*f = filterValues{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("a filter value must be a string or an array of strings")
	}
	*f = many
	return nil
}

func (q *queryModel) filter() map[string][]string {
	if q == nil {
		return nil
	}
	out := make(map[string][]string, len(q.Filter))
	for k, v := range q.Filter {
		out[k] = v
	}
	return out
}

// searchRequest is the body of POST /search (SearchRequest).
type searchRequest struct {
	Query      *queryModel `json:"query"`
	Federation string      `json:"federation"`
	PageSize   *int        `json:"pageSize"`
	PageToken  string      `json:"pageToken"`
}

// result is a search result: an entry with its relevance and where it was
// indexed (SearchResultItem).
type result struct {
	entry
	Score  int    `json:"score"`
	Source string `json:"source"`
}

// referral names another registry to ask (RegistryReferral).
type referral struct {
	Identifier  string `json:"identifier"`
	DisplayName string `json:"displayName"`
	Type        string `json:"type"`
	URL         string `json:"url"`
}

type searchResponse struct {
	Results []result `json:"results"`
	// Referrals is set in referrals mode only (spec/ard.md §8).
	Referrals *[]referral `json:"referrals,omitempty"`
	PageToken string      `json:"pageToken,omitempty"`
}

// exploreRequest is the body of POST /explore (ExploreRequest).
type exploreRequest struct {
	Query      *queryModel `json:"query"`
	ResultType *struct {
		Facets []facetRequest `json:"facets"`
	} `json:"resultType"`
}

type facetRequest struct {
	Field    string `json:"field"`
	Limit    *int   `json:"limit"`
	MinCount *int   `json:"minCount"`
}

type bucket struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

type facetResult struct {
	Buckets []bucket `json:"buckets"`
}

type exploreResponse struct {
	ResultType string                 `json:"resultType"`
	Facets     map[string]facetResult `json:"facets"`
}

type listResponse struct {
	Items     []entry `json:"items"`
	Total     int     `json:"total"`
	PageToken string  `json:"pageToken,omitempty"`
}

// decodeBody reads a JSON body strictly: the spec's request schemas refuse
// additional properties, and a misspelled member (pagesize) silently
// ignored would return what the caller did not ask for.
func decodeBody(c echo.Context, v any) error {
	r := c.Request()
	if ct := r.Header.Get(echo.HeaderContentType); ct != "" && !strings.HasPrefix(strings.ToLower(ct), echo.MIMEApplicationJSON) {
		return newError(http.StatusUnsupportedMediaType, CodeInvalidArgument, "send the request as application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return newError(http.StatusRequestEntityTooLarge, CodeInvalidArgument, "the request body is larger than %d bytes", maxBodyBytes)
	}
	if err != nil {
		return invalid("reading the request body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("the request body is not a valid request: %s", jsonProblem(err))
	}
	if dec.More() {
		return invalid("the request body holds more than one JSON value")
	}
	return nil
}

// jsonProblem says what is wrong with a body in words that do not echo it.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s must be %s", typ.Field, typ.Type)
	case errors.Is(err, io.EOF):
		return "empty body"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	return err.Error()
}
