package catalog

import "testing"

func TestRebind(t *testing.T) {
	tests := []struct {
		q    string
		d    dialect
		want string
	}{
		{"SELECT 1", dialectPostgres, "SELECT 1"},
		{"SELECT a FROM t WHERE b = ? AND c IN (?, ?)", dialectSQLite, "SELECT a FROM t WHERE b = ? AND c IN (?, ?)"},
		{"SELECT a FROM t WHERE b = ? AND c IN (?, ?)", dialectPostgres, "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"},
		{"UPDATE t SET a = ?, b = 'é' WHERE c = ?", dialectPostgres, "UPDATE t SET a = $1, b = 'é' WHERE c = $2"},
		{"?????????????", dialectPostgres, "$1$2$3$4$5$6$7$8$9$10$11$12$13"},
	}
	for _, tt := range tests {
		if got := rebind(tt.d, tt.q); got != tt.want {
			t.Errorf("rebind(%d, %q) = %q, want %q", tt.d, tt.q, got, tt.want)
		}
	}
}
