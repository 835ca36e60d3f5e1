package a2aagent

import (
	"context"
	"errors"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// taskStore is the SDK's in-memory store in two generations: tasks go
// into the current one, and when it holds tasksPerGeneration the previous
// generation is dropped. The SDK's store alone keeps every task for ever;
// the registry's answers are worth keeping only while a client may still
// fetch them, so memory stays bounded (at most twice tasksPerGeneration).
type taskStore struct {
	mu       sync.Mutex
	cur, old *taskstore.InMemory
	count    int
}

func newTaskStore() *taskStore {
	return &taskStore{cur: newGeneration()}
}

func newGeneration() *taskstore.InMemory {
	// Each caller sees only their own tasks.
	return taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: a2asrv.NewTaskStoreAuthenticator()})
}

func (s *taskStore) gens() (cur, old *taskstore.InMemory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.old
}

func (s *taskStore) Create(ctx context.Context, t *a2a.Task) (taskstore.TaskVersion, error) {
	s.mu.Lock()
	if s.count >= tasksPerGeneration {
		s.old, s.cur, s.count = s.cur, newGeneration(), 0
	}
	s.count++
	cur := s.cur
	s.mu.Unlock()
	return cur.Create(ctx, t)
}

func (s *taskStore) Update(ctx context.Context, u *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	cur, old := s.gens()
	v, err := cur.Update(ctx, u)
	if errors.Is(err, a2a.ErrTaskNotFound) && old != nil {
		return old.Update(ctx, u)
	}
	return v, err
}

func (s *taskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	cur, old := s.gens()
	t, err := cur.Get(ctx, id)
	if errors.Is(err, a2a.ErrTaskNotFound) && old != nil {
		return old.Get(ctx, id)
	}
	return t, err
}

// List lists the current generation's tasks: the recent ones.
func (s *taskStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	cur, _ := s.gens()
	return cur.List(ctx, req)
}
