package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Run is a stored test run: one conversation a tester held with an agent
// through the registry's A2A client. Transcript is the run's evidence as
// its owner (the proxy's caller) encoded it; the catalog stores it as
// given. Nothing here may hold a credential.
type Run struct {
	ID      string
	AgentID string
	// Kind is RunKindRun or RunKindCheck.
	Kind string
	// Subject is who started the run (auth principal subject).
	Subject         string
	InterfaceURL    string
	Binding         string
	ProtocolVersion string
	// State is the task state (TASK_STATE_…), or the run's own state
	// ("running", "message", "failed").
	State      string
	ContextID  string
	TaskID     string
	ErrorCode  string
	Transcript []byte
	// Revision counts updates; UpdateRun applies only to the revision it
	// names.
	Revision  int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Run kinds.
const (
	// RunKindRun is a tester's conversation with an agent.
	RunKindRun = "run"
	// RunKindCheck is a declared-vs-working check of every interface.
	RunKindCheck = "check"
)

const runColumns = "r.id, a.id, r.kind, r.subject, r.interface_url, r.binding, r.protocol_version, r.state, r.context_id, r.task_id, r.error_code, r.transcript_json, r.revision, r.created_at, r.updated_at"

// CreateRun stores a new run of an existing agent: ErrNotFound for an
// unknown agent, ErrConflict for an id already used. The audit log
// records who started it.
func (s *Store) CreateRun(ctx context.Context, actor Actor, r Run) error {
	if err := actor.validate(); err != nil {
		return err
	}
	if r.ID == "" || r.State == "" {
		return fmt.Errorf("%w: run without id or state", ErrInvalidQuery)
	}
	tr := r.Transcript
	if len(tr) == 0 {
		tr = []byte("{}")
	}
	kind := r.Kind
	if kind == "" {
		kind = RunKindRun
	}
	if kind == RunKindCheck && !validWorks(r.State) {
		return fmt.Errorf("%w: check state %q is not a works value", ErrInvalidQuery, r.State)
	}
	var (
		res *gorm.DB
		up  *fieldUpdate
	)
	err := s.transact(ctx, func(tx *txn) error {
		res = tx.Exec(`INSERT INTO runs (id, agent_pk, kind, subject, interface_url, binding, protocol_version, state,
		context_id, task_id, error_code, transcript_json, created_at, updated_at)
		SELECT ?, pk, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM agents WHERE id = ?`,
			r.ID, kind, r.Subject, r.InterfaceURL, r.Binding, r.ProtocolVersion, r.State,
			r.ContextID, r.TaskID, r.ErrorCode, string(tr), r.CreatedAt.UTC(), r.UpdatedAt.UTC(), r.AgentID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if kind == RunKindCheck {
			var err error
			if up, err = setWorks(tx, r.AgentID, r.State); err != nil {
				return err
			}
		}
		return writeAudit(tx.DB, actor, audit{action: ActionRun, targetKind: TargetAgent, targetID: r.AgentID,
			detail: map[string]any{"run_id": r.ID, "kind": kind}})
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return fmt.Errorf("creating run: %w", ErrConflict)
	}
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("creating run of agent %s: %w", r.AgentID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("creating run: %w", err)
	}
	if up != nil {
		if err := s.publishFields(ctx, []fieldUpdate{*up}); err != nil {
			s.log.Warn("refreshing search index after check", "agent_id", r.AgentID, "err", err)
		}
	}
	return nil
}

func validWorks(v string) bool {
	switch v {
	case WorksAll, WorksSome, WorksNone, WorksUnchecked:
		return true
	}
	return false
}

// setWorks makes works the agent's works facet, as its latest check found,
// bumping its seq and updated_at so that the index, and other replicas'
// Sync, pick it up. It returns the index change, nil when the value did
// not change.
func setWorks(tx *txn, agentID, works string) (*fieldUpdate, error) {
	// The row lock orders this with a concurrent card upsert or verdict,
	// so the seq this change is applied on is the one it replaces.
	q := "SELECT pk, seq, works FROM agents WHERE id = ?"
	if tx.d == dialectPostgres {
		q += " FOR UPDATE"
	}
	var (
		pk, prev int64
		stored   string
	)
	if err := tx.Raw(q, agentID).Row().Scan(&pk, &prev, &stored); err != nil {
		return nil, fmt.Errorf("reading works of agent %s: %w", agentID, translateRow(err))
	}
	if stored == works {
		return nil, nil
	}
	seqs, err := allocate(tx, "seq", 1)
	if err != nil {
		return nil, err
	}
	if err := tx.Exec("UPDATE agents SET works = ?, seq = ?, updated_at = ? WHERE pk = ?",
		works, seqs[0], time.Now().UTC(), pk).Error; err != nil {
		return nil, fmt.Errorf("updating works of agent %s: %w", agentID, err)
	}
	return &fieldUpdate{pk: pk, prev: prev, seq: seqs[0], values: map[string][]string{FieldWorks: {works}}}, nil
}

// UpdateRun replaces a run's mutable fields (everything but id, agent,
// kind, subject and creation time) if its revision is still r.Revision,
// and moves the revision on: ErrConflict when another update came first
// (read the run again and merge), ErrNotFound when the run is gone. op,
// when not empty, is the turn the update stores on behalf of actor (a
// follow-up "send", a "cancel", a "resubscribe"): it is audited as
// ActionRun in the update's transaction, so a stored turn always has its
// row and a lost race none.
func (s *Store) UpdateRun(ctx context.Context, actor Actor, r Run, op string) error {
	if err := actor.validate(); err != nil {
		return err
	}
	tr := r.Transcript
	if len(tr) == 0 {
		tr = []byte("{}")
	}
	var res *gorm.DB
	err := s.transact(ctx, func(tx *txn) error {
		res = tx.Exec(`UPDATE runs SET interface_url = ?, binding = ?, protocol_version = ?, state = ?,
		context_id = ?, task_id = ?, error_code = ?, transcript_json = ?, updated_at = ?, revision = revision + 1
		WHERE id = ? AND revision = ?`,
			r.InterfaceURL, r.Binding, r.ProtocolVersion, r.State, r.ContextID, r.TaskID, r.ErrorCode, string(tr), r.UpdatedAt.UTC(), r.ID, r.Revision)
		if res.Error != nil || res.RowsAffected == 0 || op == "" {
			return res.Error
		}
		return writeAudit(tx.DB, actor, audit{action: ActionRun, targetKind: TargetAgent, targetID: r.AgentID,
			detail: map[string]any{"run_id": r.ID, "kind": RunKindRun, "op": op}})
	})
	if err != nil {
		return fmt.Errorf("updating run: %w", err)
	}
	if res.RowsAffected == 0 {
		if _, err := s.Run(ctx, ScopeAll, r.ID); err != nil {
			return err
		}
		return fmt.Errorf("run %s changed since revision %d: %w", r.ID, r.Revision, ErrConflict)
	}
	return nil
}

// Run returns one run, or ErrNotFound (also for a run of an agent the
// scope does not see).
func (s *Store) Run(ctx context.Context, sc Scope, id string) (Run, error) {
	cond, args := sc.visibleSQL()
	if cond != "" {
		cond = " AND " + cond
	}
	runs, err := s.queryRuns(ctx, "SELECT "+runColumns+" FROM runs r JOIN agents a ON a.pk = r.agent_pk WHERE r.id = ?"+cond,
		append([]any{id}, args...)...)
	if err != nil {
		return Run{}, err
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	return runs[0], nil
}

// HasConversation tells whether subject started a run (not a check) of
// the agent on task taskID and in context contextID, each when not empty:
// whether a new run naming them continues the subject's own conversation
// rather than someone else's.
func (s *Store) HasConversation(ctx context.Context, agentID, subject, taskID, contextID string) (bool, error) {
	q := "SELECT COUNT(*) FROM runs r JOIN agents a ON a.pk = r.agent_pk WHERE a.id = ? AND r.kind = ? AND r.subject = ?"
	args := []any{agentID, RunKindRun, subject}
	if taskID != "" {
		q += " AND r.task_id = ?"
		args = append(args, taskID)
	}
	if contextID != "" {
		q += " AND r.context_id = ?"
		args = append(args, contextID)
	}
	var n int64
	if err := s.db.WithContext(ctx).Raw(q, args...).Scan(&n).Error; err != nil {
		return false, fmt.Errorf("reading runs: %w", err)
	}
	return n > 0, nil
}

// AgentRuns lists an agent's runs of kind (RunKindRun, RunKindCheck),
// newest first, at most limit; none for an agent the scope does not see.
func (s *Store) AgentRuns(ctx context.Context, sc Scope, agentID, kind string, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = 50
	}
	cond, args := sc.visibleSQL()
	if cond != "" {
		cond = " AND " + cond
	}
	return s.queryRuns(ctx, "SELECT "+runColumns+" FROM runs r JOIN agents a ON a.pk = r.agent_pk WHERE a.id = ? AND r.kind = ?"+
		cond+" ORDER BY r.created_at DESC, r.id DESC LIMIT ?", append(append([]any{agentID, kind}, args...), limit)...)
}

func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]Run, error) {
	rows, err := s.db.WithContext(ctx).Raw(q, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("reading runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var (
			r  Run
			tr sql.RawBytes
		)
		if err := rows.Scan(&r.ID, &r.AgentID, &r.Kind, &r.Subject, &r.InterfaceURL, &r.Binding, &r.ProtocolVersion, &r.State,
			&r.ContextID, &r.TaskID, &r.ErrorCode, &tr, &r.Revision, &r.CreatedAt, &r.UpdatedAt); err != nil {
			return nil, fmt.Errorf("reading runs: %w", err)
		}
		r.Transcript = append([]byte(nil), tr...)
		r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading runs: %w", err)
	}
	return out, nil
}

// PruneRuns removes runs last updated before cutoff and returns how many.
// An agent whose checks are all gone is unchecked again: the works facet
// never claims more than the stored evidence shows.
func (s *Store) PruneRuns(ctx context.Context, cutoff time.Time) (int64, error) {
	var (
		n   int64
		ups []fieldUpdate
	)
	err := s.transact(ctx, func(tx *txn) error {
		res := tx.Exec("DELETE FROM runs WHERE updated_at < ?", cutoff.UTC())
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		if n == 0 {
			return nil
		}
		var ids []string
		if err := tx.Raw(`SELECT a.id FROM agents a WHERE a.works <> ? AND NOT EXISTS
			(SELECT 1 FROM runs r WHERE r.agent_pk = a.pk AND r.kind = ?)`, WorksUnchecked, RunKindCheck).Scan(&ids).Error; err != nil {
			return err
		}
		for _, id := range ids {
			up, err := setWorks(tx, id, WorksUnchecked)
			if err != nil {
				return err
			}
			if up != nil {
				ups = append(ups, *up)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("pruning runs: %w", err)
	}
	if err := s.publishFields(ctx, ups); err != nil {
		s.log.Warn("refreshing search index after pruning runs", "err", err)
	}
	return n, nil
}
