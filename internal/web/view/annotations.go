package view

import "time"

// Annotations are the operator's facts about an agent: not card text,
// but still shown escaped, with invisible characters made visible.
type Annotations struct {
	OwnerTeam      string
	Contact        string
	Classification string
	// Labels are sorted by key.
	Labels []Label
	// Notes are shown only when ShowNotes (editors and admins).
	Notes     string
	ShowNotes bool
	// ChangedAt is zero when the agent was never annotated.
	ChangedAt time.Time
	ChangedBy string
	// Form is the edit form; nil when the caller may not edit.
	Form *AnnotationsForm
}

// Empty reports whether nothing is annotated that the caller may see.
func (a Annotations) Empty() bool {
	return a.OwnerTeam == "" && a.Contact == "" && a.Classification == "" && len(a.Labels) == 0 &&
		(!a.ShowNotes || a.Notes == "")
}

// Label is one label with the search for agents that carry it.
type Label struct {
	Key, Value string
	SearchURL  string // ours
}

// AnnotationsForm is the edit form of annotations, holding what was
// submitted when it was refused.
type AnnotationsForm struct {
	Action                             string // ours
	CSRFToken                          string // ours
	OwnerTeam, Contact, Classification string
	// LabelsText is one key=value per line.
	LabelsText string
	Notes      string
	// Error says which field was refused and why; Open keeps the form
	// open (after an error).
	Error string
	Open  bool
	// Saved is set right after a successful change.
	Saved bool
}
