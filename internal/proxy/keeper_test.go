package proxy

import (
	"testing"
	"time"
)

func TestKeeper(t *testing.T) {
	ann := Credentials{Bearer: "ann-token"}
	bob := Credentials{APIKey: "bob-key"}
	type step struct {
		do       string // remember, recall, forget, wait, use
		run, who string
		cr       Credentials
		want     Credentials // for recall and use
		found    bool
		d        time.Duration
		n        int // for len
	}
	tests := []struct {
		name  string
		max   int
		steps []step
	}{
		{"kept for its giver only", 10, []step{
			{do: "remember", run: "r1", who: "ann", cr: ann},
			{do: "recall", run: "r1", who: "ann", want: ann, found: true},
			{do: "recall", run: "r1", who: "admin"},
			{do: "recall", run: "r2", who: "ann"},
		}},
		{"empty credentials keep nothing and replace nothing", 10, []step{
			{do: "remember", run: "r1", who: "ann", cr: ann},
			{do: "remember", run: "r1", who: "ann"},
			{do: "recall", run: "r1", who: "ann", want: ann, found: true},
			{do: "remember", run: "r2", who: "ann"},
			{do: "recall", run: "r2", who: "ann"},
		}},
		{"expires after its last use, not its first", 10, []step{
			{do: "remember", run: "r1", who: "ann", cr: ann},
			{do: "wait", d: 20 * time.Minute},
			{do: "recall", run: "r1", who: "ann", want: ann, found: true},
			{do: "wait", d: 20 * time.Minute},
			{do: "recall", run: "r1", who: "ann", want: ann, found: true},
			{do: "wait", d: 31 * time.Minute},
			{do: "recall", run: "r1", who: "ann"},
		}},
		{"forget drops every giver of the run", 10, []step{
			{do: "remember", run: "r1", who: "ann", cr: ann},
			{do: "remember", run: "r1", who: "bob", cr: bob},
			{do: "remember", run: "r2", who: "ann", cr: ann},
			{do: "forget", run: "r1"},
			{do: "recall", run: "r1", who: "ann"},
			{do: "recall", run: "r1", who: "bob"},
			{do: "recall", run: "r2", who: "ann", want: ann, found: true},
		}},
		{"bounded: the entry closest to expiring goes", 2, []step{
			{do: "remember", run: "r1", who: "ann", cr: ann},
			{do: "wait", d: time.Minute},
			{do: "remember", run: "r2", who: "ann", cr: ann},
			{do: "wait", d: time.Minute},
			{do: "recall", run: "r1", who: "ann", want: ann, found: true}, // r2 is now the oldest
			{do: "remember", run: "r3", who: "bob", cr: bob},
			{do: "recall", run: "r2", who: "ann"},
			{do: "recall", run: "r1", who: "ann", want: ann, found: true},
			{do: "recall", run: "r3", who: "bob", want: bob, found: true},
		}},
		{"expired entries are dropped as the Keeper is used", 10, []step{
			{do: "remember", run: "r1", who: "ann", cr: ann},
			{do: "wait", d: 31 * time.Minute},
			{do: "recall", run: "r2", who: "bob"},
			{do: "len", n: 0},
		}},
		{"use keeps what is offered and recalls it when nothing is", 10, []step{
			{do: "use", run: "r1", who: "ann", cr: ann, want: ann},
			{do: "use", run: "r1", who: "ann", want: ann},
			{do: "use", run: "r1", who: "ann", cr: bob, want: bob},
			{do: "use", run: "r1", who: "ann", want: bob},
			{do: "use", run: "r1", who: "eve", want: Credentials{}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			k := NewKeeper(tc.max, 30*time.Minute)
			k.now = func() time.Time { return now }
			for i, s := range tc.steps {
				switch s.do {
				case "remember":
					k.Remember(s.run, s.who, s.cr)
				case "recall":
					got, ok := k.Recall(s.run, s.who)
					if ok != s.found || got.Bearer != s.want.Bearer || got.APIKey != s.want.APIKey {
						t.Errorf("step %d: Recall(%s, %s) = %+v, %v; want %+v, %v", i, s.run, s.who, got, ok, s.want, s.found)
					}
				case "use":
					got := k.Use(s.run, s.who, s.cr)
					if got.Bearer != s.want.Bearer || got.APIKey != s.want.APIKey {
						t.Errorf("step %d: Use(%s, %s) = %+v; want %+v", i, s.run, s.who, got, s.want)
					}
				case "forget":
					k.Forget(s.run)
				case "wait":
					now = now.Add(s.d)
				case "len":
					if k.Len() != s.n {
						t.Errorf("step %d: %d entries kept, want %d", i, k.Len(), s.n)
					}
				}
				if k.Len() > tc.max {
					t.Fatalf("step %d: %d entries kept, bound %d", i, k.Len(), tc.max)
				}
			}
		})
	}
}

// A nil Keeper keeps nothing: the API and the console run without one.
func TestNilKeeper(t *testing.T) {
	var k *Keeper
	k.Remember("r", "ann", Credentials{Bearer: "x"})
	if _, ok := k.Recall("r", "ann"); ok {
		t.Error("a nil Keeper recalled credentials")
	}
	k.Forget("r")
	if got := k.Use("r", "ann", Credentials{}); !got.Empty() {
		t.Errorf("Use = %+v", got)
	}
}
