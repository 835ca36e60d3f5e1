package auth

import "testing"

func TestRoleIncludes(t *testing.T) {
	roles := []Role{Viewer, Tester, Editor, Admin}
	for i, have := range roles {
		for j, need := range roles {
			if got, want := have.Includes(need), i >= j; got != want {
				t.Errorf("%v.Includes(%v) = %v, want %v", have, need, got, want)
			}
		}
	}
	if Role(0).Includes(Viewer) {
		t.Error("the zero Role includes viewer")
	}
}

func TestRoleString(t *testing.T) {
	for _, tt := range []struct {
		r    Role
		want string
	}{{Viewer, "viewer"}, {Tester, "tester"}, {Editor, "editor"}, {Admin, "admin"}, {0, "Role(0)"}, {9, "Role(9)"}} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("Role(%d).String() = %q, want %q", int(tt.r), got, tt.want)
		}
	}
}
